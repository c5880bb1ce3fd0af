package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.RemoteKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lane keeps the peer segments behind the keys it used, to store into them directly; one whose
 * owner closed it is let go at its next use, not kept until the cache fills: its mapping would keep
 * the unlinked file's memory allocated for as long as the lane lives.
 */
class SegmentCacheTest {
    @Test
    void aSegmentItsOwnerClosedIsNotKept(@TempDir Path dir) throws Exception {
        Path file = dir.resolve(Segments.processPrefix() + "region");
        DataSegment own = DataSegment.create(file, 4096, true, () -> { });
        own.registered(7);
        DataSegment.Peer peer = DataSegment.map(file, true);
        ShmLane lane = new ShmLane(null, 1, 0, null, 16, 1024, false);
        RemoteKey key = new RemoteKey(UUID.randomUUID(), 7, 1 << 20, 4096, Map.of());
        lane.segments = new java.util.IdentityHashMap<>(Map.of(key, peer)); // as the first use left it
        assertSame(peer, ShmDirectAccess.segment(lane, key), "an open segment is used from the cache");
        assertTrue(lane.segments.containsKey(key));

        own.close();
        assertFalse(Files.exists(file), "the owner unlinked it");
        assertSame(peer, ShmDirectAccess.segment(lane, key), "this access still finds it (and fails as closed)");
        assertFalse(lane.segments.containsKey(key), "but the lane lets it go");
    }

    /** A key no longer used after its region closed: the next new key's lookup sweeps it out. */
    @Test
    void aClosedSegmentOfAKeyNoLongerUsedGoesAtTheNextNewKey(@TempDir Path dir) throws Exception {
        DataSegment closing = DataSegment.create(dir.resolve(Segments.processPrefix() + "closing"), 4096, true, () -> { });
        DataSegment staying = DataSegment.create(dir.resolve(Segments.processPrefix() + "staying"), 4096, true, () -> { });
        ShmLane lane = new ShmLane(null, 1, 0, null, 16, 1024, false);
        RemoteKey gone = new RemoteKey(UUID.randomUUID(), 7, 1 << 20, 4096, Map.of());
        RemoteKey kept = new RemoteKey(UUID.randomUUID(), 8, 1 << 20, 4096, Map.of());
        RemoteKey unreachable = new RemoteKey(UUID.randomUUID(), 9, 1 << 20, 4096, Map.of());
        lane.segments = new java.util.IdentityHashMap<>(Map.of(gone, DataSegment.map(dir.resolve(Segments.processPrefix() + "closing"), true),
                kept, DataSegment.map(dir.resolve(Segments.processPrefix() + "staying"), true)));
        lane.segments.put(unreachable, null);
        closing.close();
        ShmDirectAccess.forgetClosed(lane); // what a lookup of a new key does first
        assertFalse(lane.segments.containsKey(gone), "its owner closed it");
        assertTrue(lane.segments.containsKey(kept) && lane.segments.containsKey(unreachable), "the others stay");
        staying.close();
    }
}
