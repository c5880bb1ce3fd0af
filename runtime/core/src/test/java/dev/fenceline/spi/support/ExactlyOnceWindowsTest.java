package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A worker's exactly-once windows: one per (peer, proof, origin), shared by whoever retains it (the
 * connections of every transport), lingering after the last release, bounded per peer and in all.
 */
class ExactlyOnceWindowsTest {
    private final AtomicLong now = new AtomicLong();
    private final UUID peer = UUID.randomUUID();

    private ExactlyOnceWindows windows(long perPeer, long total) {
        return new ExactlyOnceWindows("worker 'b'", 4096, Duration.ofSeconds(10), perPeer, total, now::get);
    }

    @Test
    void connectionsOfAnyTransportShareTheWindowOfOneOrigin() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window tcp = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
        ExactlyOnceWindows.Window shm = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
        assertSame(tcp, shm);
        DedupWindow d = tcp.window();
        synchronized (d) {
            assertEquals(42, w.exactlyOnce().apply(d, 7, 3, 0, () -> 42));
        }
        synchronized (d) {
            assertEquals(42, w.exactlyOnce().apply(shm.window(), 7, 3, 0, () -> {
                throw new AssertionError("a copy through the other transport is applied again");
            }));
        }
        assertNotSame(tcp, w.retain(peer, "CN=node-1", 7), "a peer that proved more has windows of its own");
        assertNotSame(tcp, w.retain(UUID.randomUUID(), ExactlyOnceWindows.MEMBER, 7), "another worker");
        assertEquals(3, w.size());
    }

    @Test
    void aWindowOutlivesItsLastHolderByTheLinger() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window first = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
        synchronized (first.window()) {
            w.exactlyOnce().apply(first.window(), 7, 0, 0, () -> 1);
        }
        w.release(first);
        now.addAndGet(Duration.ofSeconds(9).toNanos());
        assertSame(first, w.retain(peer, ExactlyOnceWindows.MEMBER, 7), "a re-sent copy within the linger finds it");
        w.release(first);
        now.addAndGet(Duration.ofSeconds(10).toNanos());
        assertEquals(0, w.size(), "gone after the linger");
        assertEquals(0, w.entries(), "and its storage given back");
        ExactlyOnceWindows.Window fresh = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
        assertNotSame(first, fresh);
    }

    @Test
    void onePeersWindowsAreBoundedAndTheOthersServed() {
        ExactlyOnceWindows w = windows(2 * DedupWindow.INITIAL, 1 << 22); // two windows' initial storage
        assertNotNull(w.retain(peer, ExactlyOnceWindows.MEMBER, 1));
        assertNotNull(w.retain(peer, ExactlyOnceWindows.MEMBER, 2));
        assertNull(w.retain(peer, ExactlyOnceWindows.MEMBER, 3), "over the peer's bound");
        assertNotNull(w.retain(UUID.randomUUID(), ExactlyOnceWindows.MEMBER, 3), "another peer is served");
        assertTrue(w.entries() <= 3 * DedupWindow.INITIAL, "entries: " + w.entries());
    }
}
