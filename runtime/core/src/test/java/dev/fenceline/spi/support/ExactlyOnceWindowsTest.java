package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;
import dev.fenceline.OutcomeUnknownException;
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

    /**
     * A window gives back storage it grew on the windows' clock (a worker's actors' clock, virtual
     * under a deterministic simulation), not on real time: the same run gives it back at the same step.
     */
    @Test
    void aWindowGivesBackGrownStorageOnTheWindowsClock() {
        ExactlyOnceWindows w = new ExactlyOnceWindows("worker 'b'", 1 << 20, Duration.ofSeconds(10), 1 << 20,
                1 << 22, now::get);
        DedupWindow d = w.retain(peer, ExactlyOnceWindows.MEMBER, 7).window();
        long initial = w.entries();
        synchronized (d) {
            w.exactlyOnce().apply(d, 7, 2047, 0, () -> 1);
            long grown = w.entries();
            assertTrue(grown > initial, "grew for the spread: " + initial + " -> " + grown);
            w.exactlyOnce().apply(d, 7, 2048, 2048, () -> 1); // the spread closed: kept for a second
            assertEquals(grown, w.entries(), "kept within the second");
            now.addAndGet(DedupWindow.KEEP_GROWN_NANOS);
            w.exactlyOnce().apply(d, 7, 2049, 2049, () -> 1);
        }
        assertEquals(initial, w.entries(), "given back a second later on the windows' clock");
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
    void aWindowWhoseHandlerStillRunsOutlivesTheLinger() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window first = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
        // The handler outlives its connection and the linger: the window must stay, or a copy sent
        // after the linger would find a fresh window and run the handler a second time.
        assertEquals(5, w.exactlyOnce().applyOutsideLock(first.window(), 7, 0, 0, () -> {
            w.release(first);
            now.addAndGet(Duration.ofSeconds(11).toNanos());
            assertEquals(1, w.size(), "expired while its handler runs");
            ExactlyOnceWindows.Window again = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
            assertSame(first, again, "a copy's connection finds another window");
            OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class, () -> w.exactlyOnce()
                    .applyOutsideLock(again.window(), 7, 0, 0, () -> {
                        throw new AssertionError("the copy ran while its first copy runs");
                    }));
            assertTrue(e.getMessage().contains("being applied now by its first copy"), e.getMessage());
            w.release(again);
            return 5;
        }));
        assertEquals(1, w.size(), "kept a linger past the last look that found its handler running");
        assertEquals(5, w.exactlyOnce().applyOutsideLock(w.retain(peer, ExactlyOnceWindows.MEMBER, 7).window(), 7,
                0, 0, () -> {
                    throw new AssertionError("a copy after the handler returned ran it again");
                }));
        w.release(first);
        now.addAndGet(Duration.ofSeconds(10).toNanos());
        assertEquals(0, w.size(), "gone after the linger once nothing runs");
        assertEquals(0, w.entries());
    }

    @Test
    void aWindowReleasedAgainAndAgainKeepsOneQueueEntry() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window a = w.retain(peer, ExactlyOnceWindows.MEMBER, 1);
        ExactlyOnceWindows.Window b = w.retain(peer, ExactlyOnceWindows.MEMBER, 2);
        // A connection whose frames alternate two origins releases one window per frame.
        for (int i = 0; i < 100_000; i++) {
            w.release(i % 2 == 0 ? a : b);
            now.incrementAndGet();
            assertSame(i % 2 == 0 ? a : b, w.retain(peer, ExactlyOnceWindows.MEMBER, i % 2 == 0 ? 1 : 2));
        }
        assertTrue(w.idleEntries() <= 2, "idle entries: " + w.idleEntries());
        assertEquals(2, w.size());
    }

    @Test
    void aWindowReleasedAgainDoesNotHoldUpTheExpiryOfOthers() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window flapping = w.retain(peer, ExactlyOnceWindows.MEMBER, 1);
        w.release(flapping); // first in the queue
        now.incrementAndGet();
        ExactlyOnceWindows.Window done = w.retain(UUID.randomUUID(), ExactlyOnceWindows.MEMBER, 2);
        w.release(done); // behind it
        now.addAndGet(Duration.ofSeconds(9).toNanos());
        assertSame(flapping, w.retain(peer, ExactlyOnceWindows.MEMBER, 1), "its connection came back");
        w.release(flapping); // and went again: idle from now
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        assertEquals(1, w.size(), "the other window's linger is over; the one idle since 2 s lingers");
        now.addAndGet(Duration.ofSeconds(8).toNanos());
        assertEquals(0, w.size(), "and it goes once its own linger is over");
        assertEquals(0, w.idleEntries());
        assertEquals(0, w.entries());
    }

    @Test
    void aWindowLingersFromItsLastRelease() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window x = w.retain(peer, ExactlyOnceWindows.MEMBER, 1);
        w.release(x); // at 0 s
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertSame(x, w.retain(peer, ExactlyOnceWindows.MEMBER, 1));
        w.release(x); // at 5 s
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        w.release(w.retain(UUID.randomUUID(), ExactlyOnceWindows.MEMBER, 2)); // at 7 s
        now.addAndGet(Duration.ofSeconds(8).toNanos());
        assertEquals(1, w.size(), "at 15 s the first is gone, 10 s after its last release; the other lingers");
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        assertEquals(0, w.size(), "and the other at 17 s");
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

    /**
     * A TLS peer proves its certificate, not the worker id it names: the ids one subject names share
     * its bound, so naming new ones does not take another peer's share of the worker's.
     */
    @Test
    void theWorkerIdsOneTlsSubjectNamesShareItsBound() {
        ExactlyOnceWindows w = windows(2 * DedupWindow.INITIAL, 8 * DedupWindow.INITIAL);
        assertNotNull(w.retain(UUID.randomUUID(), "CN=a", 1));
        assertNotNull(w.retain(UUID.randomUUID(), "CN=a", 2));
        assertNull(w.retain(UUID.randomUUID(), "CN=a", 3), "a third worker id of the same subject is over its bound");
        assertNotNull(w.retain(UUID.randomUUID(), "CN=b", 1), "another subject is served");
        assertNotNull(w.retain(UUID.randomUUID(), "CN=b", 2));
        assertNotNull(w.retain(peer, ExactlyOnceWindows.MEMBER, 1), "without TLS, the worker id is the peer");
    }

    /**
     * A refused peer (its cluster member was downed): whatever its windows had not applied is
     * refused with EndpointFailedException, now and for a copy sent again, under any proof and in
     * windows made later; what was applied before keeps its outcome; other peers are served.
     */
    @Test
    void aRefusedPeersNewOperationsAreNeverApplied() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        ExactlyOnceWindows.Window held = w.retain(peer, ExactlyOnceWindows.MEMBER, 7);
        DedupWindow d = held.window();
        ExactlyOnce once = w.exactlyOnce();
        synchronized (d) {
            assertEquals(42, once.apply(d, 7, 3, 0, () -> 42));
        }
        assertFalse(w.refuses(peer));
        assertTrue(w.refuse(peer, "its member was downed"), "newly refused");
        assertTrue(w.refuses(peer));
        assertFalse(w.refuse(peer, "its member was downed"), "refused already");
        java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
        synchronized (d) {
            assertEquals(42, once.apply(d, 7, 3, 0, () -> ran.incrementAndGet()), "applied before: its outcome");
            for (int copy = 0; copy < 2; copy++) {
                dev.fenceline.EndpointFailedException e = assertThrows(dev.fenceline.EndpointFailedException.class,
                        () -> once.apply(d, 7, 4, 0, () -> ran.incrementAndGet()), "copy " + copy);
                assertTrue(e.getMessage().contains("its member was downed"), e.getMessage());
            }
        }
        assertThrows(dev.fenceline.EndpointFailedException.class,
                () -> once.applyOutsideLock(d, 7, 5, 0, () -> ran.incrementAndGet()), "an active message");
        ExactlyOnceWindows.Window later = w.retain(peer, "CN=node-1", 8);
        synchronized (later.window()) {
            assertThrows(dev.fenceline.EndpointFailedException.class,
                    () -> once.apply(later.window(), 8, 0, 0, () -> ran.incrementAndGet()), "a window made later");
        }
        assertEquals(0, ran.get(), "nothing of the refused peer ran");
        ExactlyOnceWindows.Window other = w.retain(UUID.randomUUID(), ExactlyOnceWindows.MEMBER, 7);
        synchronized (other.window()) {
            assertEquals(5, once.apply(other.window(), 7, 0, 0, () -> 5), "another peer is served");
        }
    }

    /** The refusals remembered are bounded: the oldest is forgotten past the bound. */
    @Test
    void theRefusalsRememberedAreBounded() {
        ExactlyOnceWindows w = windows(1 << 20, 1 << 22);
        w.refuse(peer, "first");
        for (int i = 0; i < ExactlyOnceWindows.MAX_REFUSED - 1; i++) {
            w.refuse(UUID.randomUUID(), "more");
        }
        assertTrue(w.refuses(peer), "within the bound");
        w.refuse(UUID.randomUUID(), "one past the bound");
        assertFalse(w.refuses(peer), "the oldest is forgotten");
    }
}
