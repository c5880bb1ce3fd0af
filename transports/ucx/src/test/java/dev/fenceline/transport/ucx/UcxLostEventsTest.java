package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Events the native library had no memory for (a completion, an answer, a READY or an endpoint's
 * failure may be among them) cannot be had again: the worker's progress agent stops at the drain
 * that learns of them, and its lanes fail, naming why, rather than wait for what will not come.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxLostEventsTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void lostEventsStopTheTransportAndItsOperationsFailSayingWhy() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [posix]"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            b.setActiveMessageHandler(1, (h, p) -> { });
            MemoryRegion region = b.allocate(4096);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            Endpoint ab = await(a.connect(b.address()));
            ByteBuffer eight = ByteBuffer.allocateDirect(8);
            await(ab.put(eight, region.address(), key));
            await(ab.flush());
            UcxLane lane = UcxLane.byId(ab.lanes().get(0).connectionId());
            assertTrue(lane != null, "a's UCT lane to b is live");
            // As the native library counts the events it had no memory for (its status record)
            status(lane).putLongVolatile(Layout.ST_DROPPED, 3);
            Throwable failed = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (failed == null && System.nanoTime() < deadline) {
                try {
                    await(ab.sendActiveMessage(1, null, null));
                    await(ab.flush());
                    Thread.sleep(10);
                } catch (ExecutionException e) {
                    failed = e;
                }
            }
            assertTrue(failed != null, "operations went on after events were lost");
            String chain = chain(failed);
            assertTrue(chain.contains("stopped its ucx transport") && chain.contains("3 events of the UCT worker were"
                    + " lost for lack of native memory"), chain);
        }
    }

    private static UnsafeBuffer status(UcxLane lane) throws ReflectiveOperationException {
        java.lang.reflect.Field agent = UcxLane.class.getDeclaredField("agent");
        agent.setAccessible(true);
        java.lang.reflect.Field worker = UcxAgent.class.getDeclaredField("worker");
        worker.setAccessible(true);
        java.lang.reflect.Field status = UctWorker.class.getDeclaredField("status");
        status.setAccessible(true);
        return (UnsafeBuffer) status.get(worker.get(agent.get(lane)));
    }

    private static String chain(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c).append(" <- ");
        }
        return b.toString();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
}
