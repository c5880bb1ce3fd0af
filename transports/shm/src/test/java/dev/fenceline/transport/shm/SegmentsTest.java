package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a peer may plant in the segment directory: a segment is mapped only if it is a regular file
 * of this user with mode rw-------, and a name only if it has exactly the form this transport gives.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SegmentsTest {
    private static Path segment(Path dir, String name) throws IOException {
        Path f = dir.resolve(name);
        Segments.create(f, 4096, false);
        return f;
    }

    @Test
    void aSegmentOfThisUserWithModeRwIsMapped(@TempDir Path dir) throws Exception {
        Path f = segment(dir, "fl-ok");
        assertTrue(Segments.open(f, false).capacity() == 4096);
    }

    /** A file no buffer can map (a peer grew it past 2 GiB, sparse) is refused with a typed error. */
    @Test
    void aSegmentTooLargeToMapIsRefused(@TempDir Path dir) throws Exception {
        Path f = segment(dir, "fl-huge");
        try (java.io.RandomAccessFile r = new java.io.RandomAccessFile(f.toFile(), "rw")) {
            r.setLength(3L << 30); // sparse: no disk is used
        }
        IOException e = assertThrows(IOException.class, () -> Segments.open(f, false));
        assertTrue(e.getMessage().contains("3221225472 bytes, more than a segment may be"), e.getMessage());
    }

    @Test
    void aSymbolicLinkIsRefusedEvenToAGoodSegment(@TempDir Path dir) throws Exception {
        Path target = segment(dir, "fl-target");
        Path link = Files.createSymbolicLink(dir.resolve("fl-link"), target);
        IOException e = assertThrows(IOException.class, () -> Segments.open(link, false));
        assertTrue(e.getMessage().contains("not to a descriptor of the process its name gives"), e.getMessage());
    }

    @Test
    void aSegmentOthersCanWriteIsRefused(@TempDir Path dir) throws Exception {
        Path f = segment(dir, "fl-open");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
        IOException e = assertThrows(IOException.class, () -> Segments.open(f, false));
        assertTrue(e.getMessage().contains("rw-rw-rw-") && e.getMessage().contains("refused"), e.getMessage());
    }

    @Test
    void aSegmentAnotherUserOwnsIsRefused(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "only root can give a file away");
        Path f = segment(dir, "fl-foreign");
        Process chown = new ProcessBuilder("chown", "nobody", f.toString()).inheritIO().start();
        assertTrue(chown.waitFor(10, TimeUnit.SECONDS) && chown.exitValue() == 0, "chown nobody");
        IOException e = assertThrows(IOException.class, () -> Segments.open(f, false));
        assertTrue(e.getMessage().contains("owned by nobody"), e.getMessage());
    }

    @Test
    void onlyNamesOfTheTransportsOwnFormAreAccepted() {
        String id = "0123abcd";
        String control = Segments.processPrefix() + id + "-" + Segments.unguessable() + "-ctl";
        String data = Segments.processPrefix() + id + "-seg12-" + Segments.unguessable();
        assertTrue(Segments.isControlName(control), control);
        assertTrue(Segments.isDataName(data), data);
        assertFalse(Segments.isControlName(data));
        assertFalse(Segments.isDataName(control));
        for (String bad : new String[] {"/etc/passwd", "fl-../../etc/passwd", control + "/x", control.replace("-ctl",
                "-ctl\n"), "fl-1-2-3-0123abcd-0123456789abcdef-ctl\u0000", control.toUpperCase(), "", null}) {
            assertFalse(Segments.isControlName(bad), "refused: " + bad);
            assertFalse(Segments.isDataName(bad), "refused: " + bad);
        }
        assertTrue(!Segments.unguessable().equals(Segments.unguessable()), "16 random hex digits each time");
        assertTrue(Segments.printable("a\u0001b" + "x".repeat(100)).startsWith("a?b"));
    }
}
