package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A handler that blocks holds its worker's progress agent, which then answers no request; but its
 * process runs, and its heartbeat in the key table says so. Keepalive of peers on this host reads
 * the heartbeat, so the lanes to a worker with a slow handler are slow, not dead: none fails over,
 * neither the sender's nor another endpoint's, and everything sent is handled once the handler lets
 * go. (With software probes, every lane to that worker was given up within keepalive's timeout.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSlowHandlerTest {
    private static final int SLOW = 1;

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void aBlockedHandlerFailsNoLaneOfAPeerOnThisHost() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx]
                fenceline.transport.ucx.tls = [posix]
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 500ms }
                """))) {
            Worker x = await(f.newWorker("x"));
            Worker y = await(f.newWorker("y"));
            Worker z = await(f.newWorker("z"));
            Endpoint toY = await(x.connect(y.address()));
            Endpoint zToY = await(z.connect(y.address()));
            HeldHandler held = new HeldHandler();
            y.setActiveMessageHandler(SLOW, held);
            try {
                for (int i = 0; i < 10; i++) {
                    toY.sendActiveMessageImplicit(SLOW, null, ByteBuffer.allocate(8));
                }
                CompletableFuture<Void> waiting = toY.flush().toCompletableFuture();
                assertTrue(held.entered.await(10, TimeUnit.SECONDS), "the handler runs");
                Thread.sleep(2000); // keepalive's interval and timeout, over and over
                assertFalse(waiting.isDone(), "the flush waits for the handlers");
                assertTrue(toY.lanes().stream().allMatch(LaneInfo::live), "slow is not dead: " + toY.lanes());
                assertTrue(zToY.lanes().stream().allMatch(LaneInfo::live), "another endpoint's lanes keep their"
                        + " keepalive: " + zToY.lanes());
                held.release();
                waiting.get(20, TimeUnit.SECONDS);
                assertEquals(10, held.handled.get(), "every message ran once the handler let go");
                assertEquals(0, x.statistics().restarts() + z.statistics().restarts(), "nothing was sent again");
            } finally {
                held.release();
            }
        }
    }
}
