package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Memory that is registered rather than allocated is not in a shared segment: operations on it
 * travel through the target's inbox ring and are applied by its polling thread. And segments never
 * outlive their workers, nor a process that died.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmRingPathTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void registeredMemoryIsReachedThroughTheRing() throws Exception {
        // Without the cma lane (as where seccomp forbids process_vm_*), everything takes the ring.
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                """))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            ByteBuffer plain = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.nativeOrder());
            MemoryRegion region = b.register(plain);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            assertEquals(java.util.Set.of(), key.partNames(), "not a shared segment, and no cma slot");
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(1, ep.lanes().size(), "no cma lane when it is off");
            byte[] data = new byte[200_000];
            new Random(3).nextBytes(data);
            await(ep.put(ByteBuffer.wrap(data), region.address() + 64, key));
            ByteBuffer back = ByteBuffer.allocate(data.length);
            await(ep.get(back, region.address() + 64, key));
            assertArrayEquals(data, back.array());
            byte[] atTarget = new byte[data.length];
            plain.get(64, atTarget);
            assertArrayEquals(data, atTarget);
            assertEquals(0L, await(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 5)));
            assertEquals(5L, await(ep.compareAndSwap64(region.address(), key, 5, 9)));
            assertEquals(9, plain.getLong(0));
            List<String> got = new java.util.concurrent.CopyOnWriteArrayList<>();
            b.setActiveMessageHandler(4, (h, p) -> got.add(h.remaining() + "/" + p.remaining()));
            await(ep.sendActiveMessage(4, ByteBuffer.allocate(3), ByteBuffer.allocate(70_000)));
            assertEquals(List.of("3/70000"), got);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> await(ep.atomicFetch64(AtomicOp.ADD, region.address() + 3, key, 1)));
            assertEquals(RemoteAccessException.Reason.MISALIGNED,
                    assertInstanceOf(RemoteAccessException.class, e.getCause()).reason());
            assertEquals(0L, await(ep.atomicFetch64(AtomicOp.ADD, region.address() + 8, key, 1)),
                    "the endpoint still serves after a refusal");
        }
    }

    @Test
    void segmentsAreRemovedOnCloseAndAfterACrash() throws Exception {
        Path dir = Path.of("/dev/shm");
        String mine = Segments.processPrefix();
        // A segment left by a process that is gone (pid 2^22 + 1 is above the kernel's pid_max).
        Path stale = dir.resolve("fl-" + Segments.namespace() + "-4194305-12345-deadbeef-ctl");
        // Names from another PID namespace, or that are not ours at all, are left alone.
        Path foreign = dir.resolve("fl-1-4194305-12345-deadbeef-ctl");
        Path garbage = dir.resolve("fl-" + Segments.namespace() + "-99999999999999999999-1-x");
        Files.write(foreign, new byte[1]);
        Files.write(garbage, new byte[1]);
        Files.write(stale, new byte[64]);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = await(f.newWorker("a"));
            assertTrue(Files.notExists(stale), "a dead process's segment is removed when a worker starts");
            assertTrue(Files.exists(foreign) && Files.exists(garbage), "other namespaces' and odd names stay");
            a.allocate(4096);
            assertTrue(count(dir, mine) >= 2, "a control segment and a data segment");
        } finally {
            Files.deleteIfExists(stale);
            Files.deleteIfExists(foreign);
            Files.deleteIfExists(garbage);
        }
        assertEquals(0, count(dir, mine), "nothing of this process is left after close");
    }

    private static long count(Path dir, String prefix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix)).count();
        }
    }
}
