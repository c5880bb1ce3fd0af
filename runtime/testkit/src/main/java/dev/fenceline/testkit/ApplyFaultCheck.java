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
 * waiting for answers that cannot come: the sender's lanes to it go within seconds (not at
 * keepalive's timeout), the faulted worker's transport refuses its own connects naming the cause,
 * and the JVM and the other workers serve on.
 */
public final class ApplyFaultCheck {
    private static final int SIZE = 1 << 16;

    private ApplyFaultCheck() {
    }

    /**
     * @param config the runtime's settings: one transport, whose 8-byte puts into a registered region
     *     (not one it allocated to share) the target's own progress thread applies, not the caller
     *     through a mapping or a cross-memory lane; keepalive's timeout longer than 10 s
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
            // The sender learns that its peer's transport stopped: its lane to it fails (a flush with
            // nothing outstanding proves nothing, and an operation may wait for a lane to come back).
            java.util.concurrent.CountDownLatch laneLost = new java.util.concurrent.CountDownLatch(1);
            AutoCloseable watch = b.addLaneEventListener(event -> {
                if (event.peer().equals(a.address()) && (event instanceof dev.fenceline.LaneEvent.LaneFailedOver
                        || event instanceof dev.fenceline.LaneEvent.EndpointFailed)) {
                    laneLost.countDown();
                }
            });
            ByteBuffer word = ByteBuffer.allocateDirect(8).putLong(0, 7);
            ep.put(word, region.address(), key).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7, mapped.getLong(0), "applied while the file was whole");

            ch.truncate(0); // the mapping now faults where it is touched
            long start = System.nanoTime();
            // Answered before the fault surfaced, failed with the transport, or waiting for a lane:
            // whichever, a failure is a typed one (below).
            java.util.concurrent.CompletableFuture<Void> faulting = ep.put(word, region.address() + 4096, key)
                    .toCompletableFuture();
            // HotSpot (17) raises an unsafe access's fault on the faulting thread at its next safepoint,
            // not at its next return from native code: a service's JVM reaches one within moments, an
            // idle test JVM may not for seconds (a fresh-clone run waited 10 s). A collection asked
            // for each half second brings one; the bound on noticing stays 10 s.
            boolean noticed = false;
            for (long until = start + TimeUnit.SECONDS.toNanos(10); !noticed && System.nanoTime() - until < 0;) {
                noticed = laneLost.await(500, TimeUnit.MILLISECONDS);
                if (!noticed) {
                    System.gc();
                }
            }
            watch.close();
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(noticed, "the sender's lane to the faulted worker did not fail within " + ms + " ms of the"
                    + " fault: its peers are left waiting (" + ep.lanes() + ")");
            if (faulting.isCompletedExceptionally()) {
                ExecutionException e = assertThrows(ExecutionException.class, faulting::get);
                assertInstanceOf(FencelineException.class, e.getCause());
            }

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
