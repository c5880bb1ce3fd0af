package dev.fenceline.spi.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A native library a transport's jar carries as a resource: copied into a fresh temporary directory,
 * loaded from there, and the copy and its directory deleted at once (a loaded library needs its file
 * no more), so that no run leaves anything behind.
 */
public final class BundledLibrary {
    private BundledLibrary() {
    }

    /**
     * Loads the library at a path (jnr-ffi's loader, for one), and has it open when it returns: the
     * copy is deleted then (an open library stays usable after its file is gone).
     *
     * @param <T> what loading makes
     */
    @FunctionalInterface
    public interface Loader<T> {
        /**
         * @param file the library's copy, {@code lib<name>.so}
         * @param name its name as a loader takes it ({@code <name>})
         * @return what loading it made
         */
        T load(Path file, String name);
    }

    /**
     * @param <T> what loading makes
     * @param owner the class whose jar carries the library
     * @param resource the library's path in that jar, {@code .../linux-x86_64/lib<name>.so}
     * @param subject what the library is part of, as the refusal on another platform names it
     * @param missing what to say when the jar does not carry it (how the jar was built without it)
     * @param loader loads the copy
     * @return what the loader made
     * @throws IOException if this is not Linux on x86-64, the jar has no such library, or it cannot be copied
     */
    public static <T> T load(Class<?> owner, String resource, String subject, String missing, Loader<T> loader)
            throws IOException {
        String file = resource.substring(resource.lastIndexOf('/') + 1);
        if (!file.startsWith("lib") || !file.endsWith(".so") || file.length() <= "lib.so".length()) {
            throw new IllegalArgumentException("not a library's resource (.../lib<name>.so): " + resource);
        }
        String name = file.substring("lib".length(), file.length() - ".so".length());
        if (!"Linux".equals(System.getProperty("os.name")) || !"amd64".equals(System.getProperty("os.arch"))) {
            throw new IOException(subject + " is built for Linux on x86-64 only, not " + System.getProperty("os.name")
                    + " on " + System.getProperty("os.arch"));
        }
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException(missing);
            }
            Path dir = Files.createTempDirectory(file.substring(0, file.length() - ".so".length()) + "-");
            Path lib = dir.resolve(file);
            try {
                Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
                return loader.load(lib, name);
            } finally {
                Files.deleteIfExists(lib);
                Files.deleteIfExists(dir);
            }
        }
    }
}
