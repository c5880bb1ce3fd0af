package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sim transport behaves as a real one would where tests lean on it, on virtual time: a lane
 * that lost something to a short partition is not used on as if nothing was lost (a flush after
 * the heal was answered over the hole, and the lost put never completed); the lanes to a worker
 * that closed fail at once, as a closed socket's peer learns; a copy that lands late carries the
 * bytes sent, not what the caller's buffer holds by then; and what no lane can carry is refused at
 * once with a typed error.
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

    /**
     * A stalled target holds a put and a message past keepalive, so the endpoint gives them back
     * with an unknown outcome, and the caller reuses its buffers; when the target resumes it
     * applies what was sent, as a socket's frame or a ring record would carry it.
     */
    @Test
    void aLateCopyCarriesTheBytesSentNotWhatTheBufferHoldsWhenItLands() {
        String lane = "fenceline.transport.sim.direct-access = off\nfenceline.transport.sim.lanes = ["
                + "{ types = [RMA, AMO, AM], min-delay = 0us, max-delay = 20us, revocable = off } ]";
        try (DeterministicSimulation sim = DeterministicSimulation.start(44, ConfigFactory.parseString(lane))) {
            Worker a = sim.await(sim.fenceline().newWorker("origin"));
            Worker b = sim.await(sim.fenceline().newWorker("target"));
            MemoryRegion region = b.allocate(4096);
            AtomicLong handled = new AtomicLong();
            b.setActiveMessageHandler(9, (h, p) -> handled.set(p.order(ByteOrder.nativeOrder()).getLong(p.position())));
            Endpoint ep = sim.await(a.connect(b.address()));
            sim.network().stallLane(ep, 0, Duration.ofSeconds(20)); // before anything is delivered
            ByteBuffer data = word(2);
            ByteBuffer payload = word(3);
            CompletableFuture<Void> put = ep.put(data, region.address(), region.remoteKey()).toCompletableFuture();
            CompletableFuture<Void> message = ep.sendActiveMessage(9, ByteBuffer.allocate(1), payload)
                    .toCompletableFuture();
            sim.advance(Duration.ofSeconds(10)); // keepalive gives the lane up: it was the last
            for (CompletableFuture<Void> f : List.of(put, message)) {
                CompletionException e = assertThrows(CompletionException.class, f::join);
                assertInstanceOf(OutcomeUnknownException.class, e.getCause(), "in the stalled target's inbox");
            }
            data.putLong(0, 7); // the caller's buffers are its own again
            payload.putLong(0, 8);
            sim.advance(Duration.ofSeconds(15)); // the target resumes and takes what waited
            assertEquals(2, region.buffer().order(ByteOrder.nativeOrder()).getLong(0), "the put's bytes as sent");
            assertEquals(3, handled.get(), "the message's payload as sent");
        }
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
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
