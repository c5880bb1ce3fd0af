package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sim transport behaves as a real one would where tests lean on it, on virtual time: a lane
 * that lost something to a short partition is not used on as if nothing was lost (a flush after
 * the heal was answered over the hole, and the lost put never completed); the lanes to a worker
 * that closed fail at once, as a closed socket's peer learns; and what no lane can carry is
 * refused at once with a typed error.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimFidelityTest {
    private static final String ONE_LANE = "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 100us } ]";

    @Test
    void aPutLostToAShortPartitionIsNotSkippedByTheFlushAfterTheHeal() {
        try (FailoverTest.SimRig r = FailoverTest.SimRig.of(41, FailoverTest.THREE_LANES, 4096)) {
            r.net().partition(r.a().address(), r.b().address());
            ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, 7);
            CompletableFuture<Void> put = r.ep().put(v, r.region().address(), r.region().remoteKey())
                    .toCompletableFuture();
            r.sim().advance(Duration.ofMillis(500)); // shorter than keepalive's timeout: no lane is given up
            r.net().heal(r.a().address(), r.b().address());
            CompletableFuture<Void> flush = r.ep().flush().toCompletableFuture();
            r.sim().await(flush);
            assertTrue(put.isDone(), "the flush after the heal completed before the put issued before it");
            r.sim().await(put);
            assertEquals(7, r.word(0), "the put landed (restarted on a lane that lost nothing)");
            assertEquals(0, r.a().statistics().failed(), "failover hid the lost lane");
        }
    }

    @Test
    void theLanesToAWorkerThatClosedFailAtOnce() {
        try (FailoverTest.SimRig r = FailoverTest.SimRig.of(42, ONE_LANE, 4096)) {
            r.sim().await(r.ep().put(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey()));
            r.sim().await(r.b().close());
            r.sim().advance(Duration.ofMillis(10)); // far less than keepalive would take
            assertFalse(r.ep().lanes().get(0).live(), "the lane to the closed worker: " + r.ep().lanes());
            CompletionException e = assertThrows(CompletionException.class, () -> r.sim().await(r.ep().flush()));
            assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(String.valueOf(e.getCause().getMessage()).contains("closed"), e.getCause().getMessage());
        }
    }

    @Test
    void aMessageLargerThanALaneCarriesIsRefusedAtOnceAndTheEndpointServesOn() {
        try (FailoverTest.SimRig r = FailoverTest.SimRig.of(43, ONE_LANE + "\nfenceline.transport.sim.max-fragment"
                + " = 64KiB", 4096)) {
            CompletionException e = assertThrows(CompletionException.class, () -> r.sim().await(
                    r.ep().sendActiveMessage(1, ByteBuffer.allocate(16), ByteBuffer.allocate(64 * 1024))));
            assertInstanceOf(FencelineException.class, e.getCause());
            assertTrue(String.valueOf(e.getCause().getMessage()).contains("65552 bytes exceeds the lane's limit of"
                    + " 65536"), e.getCause().getMessage());
            Endpoint ep = r.ep();
            r.sim().await(ep.put(ByteBuffer.wrap(new byte[] {5}), r.region().address(), r.region().remoteKey()));
            assertEquals(5, r.region().buffer().get(0));
        }
    }
}
