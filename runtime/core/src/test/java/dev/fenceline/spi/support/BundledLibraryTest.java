package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A bundled library is copied for its loader and nothing is left behind, whether the load succeeds
 * or throws (each JVM that loaded a transport's library used to leave a directory in /tmp).
 */
class BundledLibraryTest {
    /** A resource beside this class, standing in for a library: the loader only sees its copy. */
    private static final boolean LINUX_X86_64 = "Linux".equals(System.getProperty("os.name"))
            && "amd64".equals(System.getProperty("os.arch"));
    private static final String RESOURCE = "/dev/fenceline/spi/support/native/linux-x86_64/libfenceline-test.so";

    @Test
    void theLoaderGetsACopyAndNothingIsLeft() throws Exception {
        Assumptions.assumeTrue(LINUX_X86_64, "bundles are for x86-64 Linux");
        Path[] seen = new Path[1];
        String loaded = BundledLibrary.load(BundledLibraryTest.class, RESOURCE, "test", "missing", (file, name) -> {
            seen[0] = file;
            assertTrue(Files.isRegularFile(file), "the loader gets the copy: " + file);
            return name + ":" + readQuietly(file);
        });
        assertEquals("fenceline-test:not a library\n", loaded);
        assertFalse(Files.exists(seen[0]), "the copy is deleted once loaded");
        assertFalse(Files.exists(seen[0].getParent()), "and its directory");
    }

    @Test
    void aLoaderThatThrowsLeavesNothingEither() {
        Assumptions.assumeTrue(LINUX_X86_64, "bundles are for x86-64 Linux");
        Path[] seen = new Path[1];
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class, () -> BundledLibrary.load(
                BundledLibraryTest.class, RESOURCE, "test", "missing", (file, name) -> {
                    seen[0] = file;
                    throw new UnsatisfiedLinkError("not an ELF file");
                }));
        assertEquals("not an ELF file", e.getMessage());
        assertNotNull(seen[0], "the loader was called");
        assertFalse(Files.exists(seen[0].getParent()), "the copy's directory is deleted");
    }

    @Test
    void aResourceThatIsNoLibraryIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> BundledLibrary.load(BundledLibraryTest.class,
                "/dev/fenceline/x.jar", "test", "missing", (file, name) -> name));
    }

    @Test
    void aJarWithoutTheLibrarySaysWhy() {
        Assumptions.assumeTrue(LINUX_X86_64, "bundles are for x86-64 Linux");
        IOException e = assertThrows(IOException.class, () -> BundledLibrary.load(BundledLibraryTest.class,
                "/no/such/libnothing.so", "test", "built without gcc", (file, name) -> name));
        assertEquals("built without gcc", e.getMessage());
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
