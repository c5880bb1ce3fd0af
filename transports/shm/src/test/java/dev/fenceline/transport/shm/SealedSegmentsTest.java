package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.spi.support.Host;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sealed segments: no process can shrink one under a mapping (whose next access to the lost pages
 * would fault), a peer maps one only through the checks (a link of this user to a descriptor of the
 * process its name gives, a memfd of that name, sealed against shrinking, of mode rw-------), and
 * where only sealed segments are mapped a plain file is refused, naming the setting.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SealedSegmentsTest {
    private static final String PREFIX = Segments.processPrefix() + "0fa4e5ea-";

    @BeforeAll
    static void memfdsTakeSealsHere() {
        assertEquals(null, Memfd.unavailable(), "this kernel and libc make sealed memfds");
    }

    private static Path sealed(Path dir, String tail) throws IOException {
        Path f = dir.resolve(PREFIX + tail);
        Segments.create(f, 4096, true);
        return f;
    }

    @Test
    void aPeerMapsASealedSegmentAndSharesItsMemory(@TempDir Path dir) throws Exception {
        Path f = sealed(dir, "shared");
        try {
            assertTrue(Files.isSymbolicLink(f), "the name is a link to the maker's descriptor");
            MappedByteBuffer peer = Segments.open(f, true);
            MappedByteBuffer other = Segments.open(f, false);
            assertEquals(4096, peer.capacity());
            peer.putLong(8, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, other.getLong(8), "one memory behind both mappings");
        } finally {
            Segments.remove(f);
        }
    }

    @Test
    void noProcessCanShrinkOrGrowASealedSegment(@TempDir Path dir) throws Exception {
        Path f = sealed(dir, "fixed");
        try {
            MappedByteBuffer mapped = Segments.open(f, true);
            // What a hostile process of this user would do: open the file through the link and truncate it.
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                assertThrows(IOException.class, () -> ch.truncate(0), "shrinking fails (EPERM)");
                assertThrows(IOException.class, () -> ch.write(java.nio.ByteBuffer.allocate(1), 1 << 20),
                        "growing fails (EPERM)");
                assertEquals(4096, ch.size());
            }
            mapped.putLong(4088, 7);
            assertEquals(7, mapped.getLong(4088), "the mapping's last page is still there");
        } finally {
            Segments.remove(f);
        }
    }

    @Test
    void aPlainFileIsRefusedWhereOnlySealedSegmentsAreMapped(@TempDir Path dir) throws Exception {
        Path f = dir.resolve(PREFIX + "plain");
        Segments.create(f, 4096, false);
        IOException e = assertThrows(IOException.class, () -> Segments.open(f, true));
        assertTrue(e.getMessage().contains("a plain file") && e.getMessage().contains("segments = files"),
                e.getMessage());
        assertEquals(4096, Segments.open(f, false).capacity(), "mapped where plain files are allowed");
    }

    @Test
    void aLinkToAnotherSegmentsDescriptorIsRefused(@TempDir Path dir) throws Exception {
        Path a = sealed(dir, "a");
        Path b = dir.resolve(PREFIX + "b");
        Files.createSymbolicLink(b, Files.readSymbolicLink(a));
        try {
            IOException e = assertThrows(IOException.class, () -> Segments.open(b, true));
            assertTrue(e.getMessage().contains("not the sealed segment of that name"), e.getMessage());
        } finally {
            Segments.remove(a);
        }
    }

    @Test
    void aLinkToAnythingButADescriptorOfItsProcessIsRefused(@TempDir Path dir) throws Exception {
        Path plain = dir.resolve("plain");
        Segments.create(plain, 4096, false);
        Path toFile = Files.createSymbolicLink(dir.resolve(PREFIX + "tofile"), plain);
        IOException e = assertThrows(IOException.class, () -> Segments.open(toFile, true));
        assertTrue(e.getMessage().contains("not to a descriptor of the process its name gives"), e.getMessage());

        Path real = sealed(dir, "real");
        try {
            // The same descriptor, under a name that says another process made it.
            String otherPid = Segments.processPrefix().replace("-" + Host.pid() + "-", "-" + (Host.pid() + 1) + "-");
            Path lying = Files.createSymbolicLink(dir.resolve(otherPid + "0fa4e5ea-real"), Files.readSymbolicLink(real));
            IOException l = assertThrows(IOException.class, () -> Segments.open(lying, true));
            assertTrue(l.getMessage().contains("not to a descriptor of the process its name gives"), l.getMessage());
        } finally {
            Segments.remove(real);
        }
    }

    @Test
    void aMemfdWithoutSealsIsRefused(@TempDir Path dir) throws Exception {
        String name = PREFIX + "unsealed";
        int fd = Memfd.create(name); // made as a segment is, but never sealed: it could be shrunk
        try {
            Path link = Files.createSymbolicLink(dir.resolve(name), Path.of("/proc/" + Host.pid() + "/fd/" + fd));
            try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.allocate(4096), 0);
            }
            IOException e = assertThrows(IOException.class, () -> Segments.open(link, true));
            assertTrue(e.getMessage().contains("not sealed against shrinking"), e.getMessage());
        } finally {
            Memfd.close(fd);
        }
    }

    @Test
    void aSealedMemfdOthersCouldOpenIsRefused(@TempDir Path dir) throws Exception {
        String name = PREFIX + "open";
        int fd = Memfd.create(name);
        try {
            Path mine = Path.of("/proc/self/fd/" + fd);
            try (FileChannel ch = FileChannel.open(mine, StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.allocate(4096), 0);
            }
            Memfd.seal(fd, name);
            Files.setPosixFilePermissions(mine, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
            Path link = Files.createSymbolicLink(dir.resolve(name), Path.of("/proc/" + Host.pid() + "/fd/" + fd));
            IOException e = assertThrows(IOException.class, () -> Segments.open(link, true));
            assertTrue(e.getMessage().contains("rw-rw-rw-") && e.getMessage().contains("refused"), e.getMessage());
        } finally {
            Memfd.close(fd);
        }
    }

    /**
     * A memfd of huge pages, sealed against shrinking, is still refused: its maker could punch a hole
     * and let the pool's pages go to others, and the next access would fault. It is refused before
     * it is opened or mapped (this host need have no huge pages for the file to be made).
     */
    @Test
    void aSealedHugePageMemfdIsRefused(@TempDir Path dir) throws Exception {
        String name = PREFIX + "huge";
        int fd;
        try {
            fd = Memfd.create(name, Memfd.MFD_HUGETLB);
        } catch (IOException e) {
            org.junit.jupiter.api.Assumptions.abort("no huge-page memfds on this kernel: " + e.getMessage());
            return;
        }
        try {
            try {
                Memfd.seal(fd, name); // hugetlbfs takes seals since Linux 4.16
            } catch (IOException e) {
                org.junit.jupiter.api.Assumptions.abort("huge-page memfds take no seals on this kernel: " + e.getMessage());
            }
            Path link = Files.createSymbolicLink(dir.resolve(name), Path.of("/proc/" + Host.pid() + "/fd/" + fd));
            IOException e = assertThrows(IOException.class, () -> Segments.open(link, true));
            assertTrue(e.getMessage().contains("not an ordinary memfd's"), e.getMessage());
        } finally {
            Memfd.close(fd);
        }
    }

    @Test
    void removingASegmentLetsItsNameGoAndKeepsMappingsValid(@TempDir Path dir) throws Exception {
        Path f = sealed(dir, "gone");
        MappedByteBuffer peer = Segments.open(f, true);
        Path target = Files.readSymbolicLink(f);
        Path memfd = Files.readSymbolicLink(target); // the descriptor's file, "/memfd:NAME (deleted)"
        Segments.remove(f);
        assertFalse(Files.exists(f, java.nio.file.LinkOption.NOFOLLOW_LINKS), "the link is removed");
        // Closed: the number is free, or another thread of this JVM opened something else under it since.
        Path now = null;
        try {
            now = Files.readSymbolicLink(target);
        } catch (java.nio.file.NoSuchFileException closed) {
            // free
        }
        assertFalse(memfd.equals(now), "the maker's descriptor is closed: " + target + " still names " + memfd);
        peer.putLong(0, 5);
        assertEquals(5, peer.getLong(0), "a mapping made before stays valid");
    }
}
