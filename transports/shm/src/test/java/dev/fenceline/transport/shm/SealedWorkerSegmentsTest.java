package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker's segments, made with the default {@code segments = sealed}: what a process of this user
 * could do to them through their names (shrink the control segment its peers write requests into,
 * or a region's segment its peers store into) fails, and between workers of the two settings a
 * sealed worker refuses a plain file, naming the setting, while the other workers serve on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SealedWorkerSegmentsTest {
    private static final String SHM = "fenceline.transports = [shm]\nfenceline.transport.shm.cma = off\n";

    /** @return the names in /dev/shm of the worker's segments */
    private static List<Path> segmentsOf(Worker w) throws IOException {
        String prefix = Segments.processPrefix() + w.address().workerId().toString().substring(0, 8) + "-";
        try (Stream<Path> files = Files.list(Path.of("/dev/shm"))) {
            return files.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    @Test
    void noProcessCanShrinkAWorkersSegmentsThroughTheirNames() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(SHM))) {
            Worker a = FakeShmPeer.worker(f, "a");
            Worker b = FakeShmPeer.worker(f, "b");
            MemoryRegion region = a.allocate(1 << 16);
            List<Path> segments = segmentsOf(a);
            assertEquals(2, segments.size(), "a control segment and the region's: " + segments);
            for (Path s : segments) {
                assertTrue(Files.isSymbolicLink(s), s + " is a sealed segment's link");
                // Checked sealed first: were it not, the truncation below would fault this JVM's mappings.
                assertTrue(Segments.open(s, true).capacity() > 0, s + " maps as a sealed segment");
                try (FileChannel ch = FileChannel.open(s, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    long size = ch.size();
                    assertThrows(IOException.class, () -> ch.truncate(size / 2), s + ": shrinking fails (EPERM)");
                    assertEquals(size, ch.size(), s + " kept its size");
                }
            }
            // And the worker serves on: a put into the region from a peer, read back.
            Endpoint ep = b.connect(a.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ByteBuffer word = ByteBuffer.allocateDirect(8).putLong(0, 0x5ea1edL);
            ep.put(word, region.address() + 4096, b.unpackRemoteKey(region.remoteKey().toBytes()))
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(0x5ea1edL, region.buffer().duplicate().order(java.nio.ByteOrder.BIG_ENDIAN).getLong(4096));
        }
    }

    @Test
    void aSealedWorkerRefusesAPlainFileWorkerNamingTheSetting() throws Exception {
        try (Fenceline sealed = Fenceline.create(ConfigFactory.parseString(SHM));
                Fenceline files = Fenceline.create(ConfigFactory.parseString(SHM
                        + "fenceline.transport.shm.segments = files\n"))) {
            Worker s = FakeShmPeer.worker(sealed, "s");
            Worker p = FakeShmPeer.worker(files, "p");
            for (Path seg : segmentsOf(p)) {
                assertTrue(Files.isRegularFile(seg, java.nio.file.LinkOption.NOFOLLOW_LINKS), seg + " is a plain file");
            }
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> s.connect(p.address()).toCompletableFuture().get(10, TimeUnit.SECONDS));
            assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("a plain file")
                    && e.getCause().getMessage().contains("segments = files"), e.getCause().getMessage());

            // Each serves on with its own kind.
            Worker s2 = FakeShmPeer.worker(sealed, "s2");
            MemoryRegion r = s2.allocate(4096);
            Endpoint ok = s.connect(s2.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ok.put(ByteBuffer.allocateDirect(8).putLong(0, 3), r.address(), s.unpackRemoteKey(r.remoteKey().toBytes()))
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(3, r.buffer().duplicate().order(java.nio.ByteOrder.BIG_ENDIAN).getLong(0));
            Worker p2 = FakeShmPeer.worker(files, "p2");
            p.connect(p2.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
