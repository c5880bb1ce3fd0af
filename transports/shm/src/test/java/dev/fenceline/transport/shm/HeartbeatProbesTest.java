package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Keepalive probes are answered by the peer's heartbeat moving, not by time or by asking. */
class HeartbeatProbesTest {
    private final AtomicLong beat = new AtomicLong(5);
    private final List<Long> answered = new ArrayList<>();
    private final HeartbeatProbes probes = new HeartbeatProbes(beat::get, answered::add);

    @Test
    void aProbeIsAnsweredOnlyOnceTheHeartbeatMovedPastTheCountItWasQueuedAt() {
        assertTrue(probes.isEmpty());
        probes.add(1);
        probes.add(2);
        probes.answer();
        assertEquals(List.of(), answered, "the peer has not beaten: a stopped process answers nothing");
        assertFalse(probes.isEmpty());

        beat.incrementAndGet();
        probes.add(3); // queued at the new count
        probes.answer();
        assertEquals(List.of(1L, 2L), answered, "the older probes, oldest first");
        assertFalse(probes.isEmpty(), "probe 3 waits for the next beat");
        probes.answer();
        assertEquals(List.of(1L, 2L), answered, "each probe is answered once");

        beat.incrementAndGet();
        probes.answer();
        assertEquals(List.of(1L, 2L, 3L), answered);
        assertTrue(probes.isEmpty());
    }

    @Test
    void withNoProbeWaitingTheHeartbeatIsNotRead() {
        AtomicInteger reads = new AtomicInteger();
        HeartbeatProbes idle = new HeartbeatProbes(() -> {
            reads.incrementAndGet();
            return 0;
        }, token -> fail("no probe was queued, yet " + token + " was answered"));
        idle.answer();
        assertEquals(0, reads.get());
        idle.add(7);
        assertEquals(1, reads.get(), "a probe remembers the count when it is queued");
    }
}
