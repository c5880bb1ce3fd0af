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
        Path file = dir.resolve("region");
        DataSegment own = DataSegment.create(file, 4096, () -> { });
        own.registered(7);
        DataSegment.Peer peer = DataSegment.map(file);
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
}
