package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer segment this process cannot map (here: its file is moved away, as where the owner's
 * directory is not this process's) is not tried again on every operation: its operations go through
 * the owner, and the map is tried again after a second, so that once the file is back the
 * operations go to the mapping again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnmappableSegmentTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static ShmTransport shmOf(Worker w) throws Exception {
        java.lang.reflect.Field list = w.getClass().getDeclaredField("transportList");
        list.setAccessible(true);
        for (Object t : (List<?>) list.get(w)) {
            if (t instanceof ShmTransport shm) {
                return shm;
            }
        }
        throw new AssertionError("worker " + w + " has no shm transport");
    }

    private static Object field(ShmTransport shm, String name) throws Exception {
        java.lang.reflect.Field f = ShmTransport.class.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(shm);
    }

    private static ShmMemory memoryOf(Worker w) throws Exception {
        return (ShmMemory) field(shmOf(w), "memory");
    }

    private static ShmLane ringLaneOf(Worker w) throws Exception {
        List<ShmLane> all = List.copyOf(((ShmLaneTable) field(shmOf(w), "lanes")).all());
        assertEquals(1, all.size(), "one ring lane: " + all);
        return all.get(0);
    }

    @Test
    void aSegmentThatCannotBeMappedIsTriedOnceAWhileNotPerOperation() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            MemoryRegion region = b.allocate(4096);
            byte[] packed = region.remoteKey().toBytes();
            String name = DataSegment.nameOf(RemoteKey.fromBytes(packed).part(ShmTransportProvider.NAME));
            assertNotNull(name, "the key names its segment");
            Path file = Path.of("/dev/shm", name);
            Path away = Path.of("/dev/shm", name + ".away");
            Files.move(file, away); // the owner keeps its mapping; no one else can map it now
            try {
                ShmMemory memory = memoryOf(a);
                long before = memory.mapFailures();
                long start = System.nanoTime();
                RemoteKey key = a.unpackRemoteKey(packed);
                Endpoint ep = await(a.connect(b.address()));
                ShmLane lane = ringLaneOf(a);
                int puts = 1_000;
                for (int i = 0; i < puts; i++) { // each awaited: the next finds the lane idle and looks for a mapping
                    await(ep.put(ByteBuffer.allocate(8).putLong(0, i), region.address() + 8L * (i % 512), key));
                }
                // The endpoint actor's way (nothing is in flight, so this thread may stand in for it).
                assertNull(ShmDirectAccess.segment(lane, key), "not reachable directly while the file is away");
                long tries = memory.mapFailures() - before;
                long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
                assertTrue(tries >= 1 && tries <= 2 + seconds, tries + " failed maps for " + puts + " puts in about "
                        + seconds + " s: once at the unpack, then at most once a second");
                for (int i = puts - 512; i < puts; i++) { // the last put to each place
                    assertEquals(i, word(region, 8 * (i % 512)), "the put of " + i + " reached the owner's memory");
                }
                assertFalse(memory.maps(name), "not mapped while the file is away");
                Files.move(away, file);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                for (long i = puts; !memory.maps(name); i++) { // the retry comes with an operation, a second on
                    assertTrue(System.nanoTime() < deadline, "the segment was not mapped again once its file was back");
                    await(ep.put(ByteBuffer.allocate(8).putLong(0, i), region.address(), key));
                    Thread.sleep(10);
                }
                assertNotNull(ShmDirectAccess.segment(lane, key), "the actor's way reaches the mapping again too");
                long failures = memory.mapFailures();
                await(ep.put(ByteBuffer.allocate(8).putLong(0, -1L), region.address(), key));
                assertEquals(-1L, word(region, 0), "a put through the mapping again");
                assertEquals(failures, memory.mapFailures(), "no more failed maps");
            } finally {
                if (Files.exists(away)) {
                    Files.move(away, file); // the owner removes it at close
                }
            }
        }
    }

    private static long word(MemoryRegion region, int at) {
        byte[] got = new byte[8];
        region.buffer().get(at, got);
        return ByteBuffer.wrap(got).getLong();
    }
}
