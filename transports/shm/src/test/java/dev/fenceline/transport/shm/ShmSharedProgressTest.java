package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * shm's polling loop is a progress agent the runtime runs: on a thread of the runtime's own per
 * worker, dedicated or shared, and registered memory (the ring path) works either way.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmSharedProgressTest {
    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private static List<String> progressThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("fenceline-progress-pa") || n.startsWith("fenceline-progress-pb")).sorted()
                .toList();
    }

    @Test
    void theRuntimeRunsThePollingLoopOnItsOwnThreadInEitherThreading() throws Exception {
        for (String threading : List.of("dedicated", "shared")) {
            try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]\n"
                    + "fenceline.transport.shm.cma = off\nfenceline.progress.threading = " + threading))) {
                Worker a = await(f.newWorker("pa"));
                Worker b = await(f.newWorker("pb"));
                MemoryRegion r = b.register(ByteBuffer.allocateDirect(4096));
                Endpoint ep = await(a.connect(b.address()));
                await(ep.put(ByteBuffer.wrap(new byte[] {42}), r.address(), a.unpackRemoteKey(r.remoteKey()
                        .toBytes())));
                assertEquals(42, r.buffer().get(0), threading);
                List<String> threads = progressThreads();
                assertTrue(threads.stream().anyMatch(n -> n.startsWith("fenceline-progress-pa"))
                        && threads.stream().anyMatch(n -> n.startsWith("fenceline-progress-pb")), threading + ": "
                        + threads);
            }
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!progressThreads().isEmpty()) {
            assertTrue(System.nanoTime() < end, "progress threads left after close: " + progressThreads());
            Thread.sleep(10);
        }
    }
}
