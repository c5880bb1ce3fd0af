package dev.fenceline.transport.tcp;

import dev.fenceline.spi.support.ConfigReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.EnumSet;
import java.util.Set;

/**
 * Reads a key file ({@code secret-file}): random bytes that only their owner can read, the way
 * ssh treats a private key. A file others can read, a link, or too few bytes is refused with the
 * key, the path and the reason; its content is never shown.
 */
final class SecretFiles {
    static final int MIN_BYTES = 32;
    static final int MAX_BYTES = 4096;
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private SecretFiles() {
    }

    static byte[] read(ConfigReader r, String key, String file) {
        Path p = Path.of(file);
        try {
            PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile()) {
                throw r.invalid(key, file, "a regular file (not a link or a directory)");
            }
            Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
            open.addAll(a.permissions());
            open.retainAll(OTHERS);
            if (!open.isEmpty()) {
                throw r.invalid(key, file, "a file only its owner can read (chmod 600): it allows " + open);
            }
            if (a.size() < MIN_BYTES || a.size() > MAX_BYTES) {
                throw r.invalid(key, file, MIN_BYTES + " to " + MAX_BYTES + " random bytes (e.g. head -c 32"
                        + " /dev/urandom), not " + a.size());
            }
            return Files.readAllBytes(p);
        } catch (UnsupportedOperationException e) {
            throw r.invalid(key, file, "a file on a file system with POSIX permissions");
        } catch (IOException e) {
            throw r.invalid(key, file, "a readable file (" + e + ")");
        }
    }
}
