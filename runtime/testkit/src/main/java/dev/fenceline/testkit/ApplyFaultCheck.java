package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.FencelineException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * What a transport does when the thread that applies its peers' operations faults: a put is applied
 * into a region whose file was shrunk under its mapping, which the JVM reports as an
 * {@link InternalError} on that thread, asynchronously (the store is skipped, and the error may
 * surface after the put was answered). The thread must not end silently with the worker's peers
 * waiting for answers that cannot come: the sender's operations fail, typed, within seconds (not
 * at keepalive's timeout), the faulted worker's transport refuses its own connects naming the cause,
 * and the JVM and the other workers serve on.
 */
public final class ApplyFaultCheck {
    private static final int SIZE = 1 << 16;

    private ApplyFaultCheck() {
    }

    /**
     * @param config the runtime's settings: one transport, whose puts into a registered region the
     *     target's own thread applies; keepalive's timeout longer than 10 s
     * @param cause words the faulted worker's connect failure must contain
     * @param dir a directory for the region's file
     * @throws Exception if a step fails unexpectedly
     */
    public static void check(Config config, String cause, Path dir) throws Exception {
        Path file = Files.createTempFile(dir, "region", ".bin");
        try (Fenceline f = Fenceline.create(config);
                FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(SIZE));
            MappedByteBuffer mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, SIZE);
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = a.register(mapped);
            RemoteKey key = b.unpackRemoteKey(region.remoteKey().toBytes());
            Endpoint ep = b.connect(a.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ByteBuffer word = ByteBuffer.allocateDirect(8).putLong(0, 7);
            ep.put(word, region.address(), key).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7, mapped.getLong(0), "applied while the file was whole");

            ch.truncate(0); // the mapping now faults where it is touched
            long start = System.nanoTime();
            try { // it ends either way: answered before the fault surfaced, or failed with the transport
                ep.put(word, region.address() + 4096, key).toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                assertInstanceOf(FencelineException.class, e.getCause());
            }
            ExecutionException failed = null;
            while (failed == null && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
                try {
                    ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
                    Thread.sleep(10); // until the sender learns its peer's transport stopped
                } catch (ExecutionException e) {
                    failed = e;
                }
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(failed != null, "the sender's operations to the faulted worker still succeed " + ms
                    + " ms after the fault: its peers are left waiting");
            assertInstanceOf(FencelineException.class, failed.getCause());

            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS),
                    "the faulted worker's transport connects no more");
            assertTrue(String.valueOf(refused.getCause()).contains(cause),
                    "its connect fails naming the cause (" + cause + "): " + refused.getCause());

            Worker c = f.newWorker("c").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker d = f.newWorker("d").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion other = d.allocate(SIZE);
            Endpoint cd = c.connect(d.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            cd.put(word, other.address(), c.unpackRemoteKey(other.remoteKey().toBytes())).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertEquals(7, other.buffer().duplicate().order(java.nio.ByteOrder.BIG_ENDIAN).getLong(0),
                    "the other workers serve on");
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
