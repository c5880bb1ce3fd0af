package dev.fenceline.transport.shm;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Segment files: created, mapped, removed. A segment's name says which process made it
 * ({@code fl-PID-START-...}), so the segments of a process that died can be found and removed
 * without any registry that could itself go stale.
 */
final class Segments {
    private static final Logger LOG = LoggerFactory.getLogger(Segments.class);
    private static final Pattern NAME = Pattern.compile("^fl-(\\d+)-(\\d+)-(\\d+)-.*");

    private Segments() {
    }

    /** @return the name prefix of this process's segments */
    static String processPrefix() {
        return "fl-" + namespace() + "-" + Host.pid() + "-" + Host.startTime() + "-";
    }

    /** The PID namespace's inode number: segments of other namespaces are never judged by our pids. */
    static String namespace() {
        return Host.pidNamespaceId().replaceAll("[^0-9]", "");
    }

    /**
     * Creates and maps a new zeroed segment of {@code bytes}, readable and writable by this user only.
     * The pages are written once first: a full tmpfs then fails here with an IOException instead of
     * killing the process with SIGBUS on the first touch of a sparse mapping.
     */
    static MappedByteBuffer create(Path file, long bytes) throws IOException {
        Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocateDirect((int) Math.min(bytes, 1 << 20));
            for (long at = 0; at < bytes; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - at));
                at += ch.write(zeros, at);
            }
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            m.order(ByteOrder.nativeOrder());
            return m;
        } catch (IOException | RuntimeException e) {
            remove(file);
            throw e;
        }
    }

    /** Maps an existing segment, whole. */
    static MappedByteBuffer open(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size());
            m.order(ByteOrder.nativeOrder());
            return m;
        }
    }

    static void remove(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warn("shm: could not remove {}: {}", file, e.toString());
        }
    }

    /**
     * Removes every segment in {@code dir} whose creating process is gone (a crash or a kill left
     * it behind). Segments of live processes, and files that are not ours, are left alone.
     *
     * @return how many were removed
     */
    static int removeStale(Path dir) {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "fl-*")) {
            for (Path f : files) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (!m.matches() || !m.group(1).equals(namespace())) {
                    continue; // not ours, or made in another PID namespace, where our pids mean nothing
                }
                long pid;
                long start;
                try {
                    pid = Long.parseLong(m.group(2));
                    start = Long.parseLong(m.group(3));
                } catch (NumberFormatException e) {
                    continue; // a name we did not make
                }
                if (!Host.alive(pid, start)) {
                    remove(f);
                    removed++;
                }
            }
        } catch (IOException e) {
            LOG.warn("shm: could not scan {} for stale segments: {}", dir, e.toString());
        }
        if (removed > 0) {
            LOG.info("shm: removed {} segments of processes that are gone from {}", removed, dir);
        }
        return removed;
    }
}
