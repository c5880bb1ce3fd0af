package dev.fenceline.transport.shm;

import dev.fenceline.spi.support.Host;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Segments: created, mapped, removed. A sealed segment is a memfd whose size no process can change,
 * named in the directory by a link to its maker's descriptor; a plain one is a file there. A
 * segment's name says which process made it ({@code fl-PIDNS-PID-START-...}), so the names a
 * process that died left behind can be found and removed without any registry that could itself go
 * stale.
 */
final class Segments {
    private static final Logger LOG = LoggerFactory.getLogger(Segments.class);
    private static final Pattern NAME = Pattern.compile("^fl-(\\d+)-(\\d+)-(\\d+)-.*");
    /** A sealed segment's link: a descriptor of the process that made it. */
    private static final Pattern DESCRIPTOR = Pattern.compile("^/proc/(\\d{1,10})/fd/(\\d{1,10})$");
    /** This process's sealed segments: their links, and the descriptors the links name. */
    private static final java.util.concurrent.ConcurrentHashMap<Path, Integer> OWNED =
            new java.util.concurrent.ConcurrentHashMap<>();

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
     * Creates and maps a new zeroed segment of {@code bytes}, readable and writable by this user only:
     * with {@code sealed}, a memfd whose size is sealed, which {@code file} names as a link to this
     * process's descriptor of it ({@code /proc/PID/fd/FD}); otherwise a plain file. The pages are
     * written once first: a full memory then fails here with an IOException instead of killing the
     * process with SIGBUS on the first touch of a sparse mapping.
     */
    static MappedByteBuffer create(Path file, long bytes, boolean sealed) throws IOException {
        return sealed ? createSealed(file, bytes) : create(file, bytes);
    }

    private static MappedByteBuffer createSealed(Path file, long bytes) throws IOException {
        String name = file.getFileName().toString();
        int fd = Memfd.create(name);
        boolean linked = false;
        try {
            MappedByteBuffer m;
            try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                zero(ch, bytes);
                Memfd.seal(fd, name);
                m = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            }
            m.order(ByteOrder.nativeOrder());
            Files.createSymbolicLink(file, Path.of("/proc/" + Host.pid() + "/fd/" + fd));
            linked = true;
            OWNED.put(file, fd); // peers open the file through this descriptor: kept until removed
            return m;
        } finally {
            if (!linked) {
                Memfd.close(fd);
            }
        }
    }

    private static void zero(FileChannel ch, long bytes) throws IOException {
        java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocateDirect((int) Math.min(bytes, 1 << 20));
        for (long at = 0; at < bytes; ) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - at));
            at += ch.write(zeros, at);
        }
    }

    /** Creates a plain segment file ({@link #create(Path, long, boolean)}). */
    private static MappedByteBuffer create(Path file, long bytes) throws IOException {
        Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            zero(ch, bytes);
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            m.order(ByteOrder.nativeOrder());
            return m;
        } catch (IOException | RuntimeException e) {
            remove(file);
            throw e;
        }
    }

    /**
     * Maps an existing segment, whole, if it is one a peer of this user made: a sealed segment
     * ({@link #create(Path, long, boolean)}), or, unless {@code sealedOnly}, a plain file. A plain
     * file must be a regular file, not a symbolic link (opened with {@code O_NOFOLLOW}), owned by this
     * process's user, readable and writable by that user only, and the same file after opening as
     * when checked. Anything else in the directory (a link planted by another user, a file another
     * user owns or can write) is refused before it is mapped.
     *
     * @param sealedOnly whether only a sealed segment may be mapped: any process of this user could
     *     shrink a plain file under this process's mapping, faulting its next access
     * @throws IOException naming the file and what is wrong with it
     */
    static MappedByteBuffer open(Path file, boolean sealedOnly) throws IOException {
        PosixFileAttributes link;
        try {
            link = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new IOException("shm: " + file + " cannot be read: " + e, e);
        }
        if (link.isSymbolicLink()) {
            return openSealed(file, link);
        }
        if (sealedOnly) {
            throw new IOException("shm: " + file + " is " + (link.isRegularFile() ? "a plain file" : "not a segment")
                    + ", which any process of this user could shrink under this worker's mapping: refused (segments"
                    + " = sealed maps sealed segments only; a deployment whose workers use plain files sets"
                    + " fenceline.transport.shm.segments = files on every worker)");
        }
        return open(file);
    }

    /**
     * A sealed segment: the link is this user's and names a descriptor of the process whose name it
     * carries; the file it reaches is a memfd of that name, this user's, readable and writable by
     * it only, whose size is sealed. Checked through one descriptor, so it is the file mapped.
     */
    private static MappedByteBuffer openSealed(Path file, PosixFileAttributes link) throws IOException {
        String me = System.getProperty("user.name");
        if (!link.owner().getName().equals(me)) {
            throw new IOException("shm: " + file + " is a link owned by " + link.owner().getName() + ", not by " + me
                    + ": refused");
        }
        String name = file.getFileName().toString();
        String target = Files.readSymbolicLink(file).toString();
        Matcher t = DESCRIPTOR.matcher(target);
        Matcher n = NAME.matcher(name);
        if (!t.matches() || !n.matches() || !n.group(1).equals(namespace()) || !t.group(1).equals(n.group(2))) {
            throw new IOException("shm: " + file + " links to " + printable(target) + ", not to a descriptor of the"
                    + " process its name gives: refused");
        }
        // Named, not opened, until it shows to be a memfd of that name: nothing a peer links to is opened.
        int named = Memfd.path(target);
        int fd = -1;
        try {
            String reached = Files.readSymbolicLink(Path.of("/proc/self/fd/" + named)).toString();
            if (!reached.equals("/memfd:" + name + " (deleted)")) {
                throw new IOException("shm: " + file + " reaches " + printable(reached) + ", not the sealed segment"
                        + " of that name: refused");
            }
            long fsType = Memfd.fileSystemType(named, name);
            if (fsType != Memfd.TMPFS_MAGIC) { // a huge-page memfd's pages can run out under a mapping
                throw new IOException("shm: " + file + " is on a file system of type 0x" + Long.toHexString(fsType)
                        + ", not an ordinary memfd's: refused");
            }
            fd = Memfd.reopen(named, name);
            Path mine = Path.of("/proc/self/fd/" + fd);
            int seals = Memfd.seals(fd, name);
            if ((seals & Memfd.F_SEAL_SHRINK) == 0) {
                throw new IOException("shm: " + file + " is not sealed against shrinking (seals " + seals + "): refused");
            }
            checkOwnerOnly(file, Files.readAttributes(mine, PosixFileAttributes.class));
            try (FileChannel ch = FileChannel.open(mine, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                return mapWhole(file, ch);
            }
        } finally {
            if (fd >= 0) {
                Memfd.close(fd);
            }
            Memfd.close(named);
        }
    }

    /** Maps a plain segment file ({@link #open(Path, boolean)}). */
    private static MappedByteBuffer open(Path file) throws IOException {
        PosixFileAttributes before = checkedAttributes(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            PosixFileAttributes after = checkedAttributes(file);
            if (!java.util.Objects.equals(before.fileKey(), after.fileKey())) {
                throw new IOException("shm: " + file + " was replaced while it was opened");
            }
            return mapWhole(file, ch);
        }
    }

    /** Maps the whole of an opened segment, in native byte order. */
    private static MappedByteBuffer mapWhole(Path file, FileChannel ch) throws IOException {
        long size = ch.size();
        if (size > Integer.MAX_VALUE) { // a buffer cannot map it; FileChannel.map would throw untyped
            throw new IOException("shm: " + file + " is " + size + " bytes, more than a segment may be ("
                    + Integer.MAX_VALUE + "): refused");
        }
        MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
        m.order(ByteOrder.nativeOrder());
        return m;
    }

    private static PosixFileAttributes checkedAttributes(Path file) throws IOException {
        PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!a.isRegularFile()) {
            throw new IOException("shm: " + file + " is not a regular file (" + (a.isSymbolicLink() ? "a symbolic link"
                    : a.isDirectory() ? "a directory" : "a special file") + "): refused");
        }
        checkOwnerOnly(file, a);
        return a;
    }

    /** A segment's file must be this user's, readable and writable by it only. */
    private static void checkOwnerOnly(Path file, PosixFileAttributes a) throws IOException {
        String me = System.getProperty("user.name");
        if (!a.owner().getName().equals(me)) {
            throw new IOException("shm: " + file + " is owned by " + a.owner().getName() + ", not by " + me
                    + ": refused");
        }
        java.util.Set<PosixFilePermission> p = a.permissions();
        if (!OWNER_ONLY.containsAll(p)) {
            throw new IOException("shm: " + file + " has mode " + PosixFilePermissions.toString(p)
                    + ", more than rw-------: refused");
        }
    }

    private static final java.util.Set<PosixFilePermission> OWNER_ONLY = java.util.EnumSet.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

    private static final Pattern CONTROL_NAME = Pattern.compile("^fl-\\d{1,20}-\\d{1,10}-\\d{1,20}-[0-9a-f]{8}-[0-9a-f]{16}-ctl$");
    private static final Pattern DATA_NAME = Pattern.compile("^fl-\\d{1,20}-\\d{1,10}-\\d{1,20}-[0-9a-f]{8}-seg\\d{1,19}-[0-9a-f]{16}$");

    /**
     * @param name a control segment's name, as a peer wrote it
     * @return whether it has exactly the form this transport gives one (so it is a plain file name)
     */
    static boolean isControlName(String name) {
        return name != null && name.length() <= 128 && CONTROL_NAME.matcher(name).matches();
    }

    /**
     * @param name a data segment's name, as a key carries it
     * @return whether it has exactly the form this transport gives one
     */
    static boolean isDataName(String name) {
        return name != null && name.length() <= 128 && DATA_NAME.matcher(name).matches();
    }

    /** @return 16 hex digits from a strong source: no one can guess a segment's name in advance */
    static String unguessable() {
        return String.format("%016x", RANDOM.nextLong());
    }

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /** Removes a segment's name; a sealed one's descriptor is closed (the memory lives while mapped). */
    static void remove(Path file) {
        try {
            Files.deleteIfExists(file); // first: the link must not outlive its descriptor's number
        } catch (IOException e) {
            LOG.warn("shm: could not remove {}: {}", file, e.toString());
        }
        Integer fd = OWNED.remove(file);
        if (fd != null) {
            Memfd.close(fd);
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

    /** @return a peer-written name as it may be logged: at most 64 characters, control characters shown as '?' */
    static String printable(String name) {
        String cut = name.length() > 64 ? name.substring(0, 64) + "..." : name;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }
}
