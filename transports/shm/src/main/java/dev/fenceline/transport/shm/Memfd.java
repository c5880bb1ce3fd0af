package dev.fenceline.transport.shm;

import java.io.IOException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

/**
 * The libc calls of sealed segments, bound by jnr-ffi: an anonymous memory file ({@code memfd_create})
 * whose size is sealed, so that no process can shrink it under a mapping (which would fault the next
 * access to the lost pages), and the checks a peer's file is put through before it is mapped.
 */
final class Memfd {
    /** {@code MFD_CLOEXEC}: a process this one starts does not inherit the descriptor. */
    static final int MFD_CLOEXEC = 0x1;
    /** {@code MFD_ALLOW_SEALING}: without it a memfd takes no seal. */
    static final int MFD_ALLOW_SEALING = 0x2;
    /** {@code MFD_HUGETLB}: a memfd of huge pages (never made here; refused as a peer's segment). */
    static final int MFD_HUGETLB = 0x4;
    static final int F_ADD_SEALS = 1033;
    static final int F_GET_SEALS = 1034;
    static final int F_SEAL_SEAL = 0x1;
    static final int F_SEAL_SHRINK = 0x2;
    static final int F_SEAL_GROW = 0x4;
    /** What a segment's maker seals, and what a peer's segment must have: its size fixed, for good. */
    static final int SEALS = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    static final int O_RDWR = 0x2;
    static final int O_NOCTTY = 0x100;
    static final int O_CLOEXEC = 0x80000;
    /** {@code O_PATH}: a descriptor that names a file without opening it (no file system's open runs). */
    static final int O_PATH = 0x200000;
    /** The file system type of memfds (shmem): {@code TMPFS_MAGIC}. */
    static final long TMPFS_MAGIC = 0x01021994L;
    /** {@code sizeof(struct statfs)} on x86-64 and aarch64 Linux, its {@code f_type} a long at offset 0. */
    private static final int STATFS_SIZE = 120;

    /** The bound functions; public at the class-file level for jnr-ffi's class loader. */
    public interface Calls {
        @SaveError
        int memfd_create(String name, int flags);

        @SaveError
        int fchmod(int fd, int mode);

        @SaveError
        int fcntl(int fd, int cmd, int arg);

        @SaveError
        int open(String path, int flags);

        @SaveError
        int fstatfs(int fd, jnr.ffi.Pointer buf);

        int close(int fd);

        String strerror(int errno);
    }

    private static final Calls LIBC;
    private static final Runtime RUNTIME;
    private static final String UNAVAILABLE;

    static {
        Calls lib = null;
        Runtime rt = null;
        String why = null;
        try {
            lib = LibraryLoader.create(Calls.class).load("c");
            rt = Runtime.getRuntime(lib);
            why = probe(lib, rt);
        } catch (RuntimeException | LinkageError e) {
            why = "jnr-ffi could not bind libc: " + e;
        }
        LIBC = lib;
        RUNTIME = rt;
        UNAVAILABLE = why;
    }

    private Memfd() {
    }

    /** @return why sealed segments cannot be made here, or null if they can */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /** Makes and seals a memfd of one page: the cheapest proof that this kernel and libc have both. */
    private static String probe(Calls lib, Runtime rt) {
        int fd = lib.memfd_create("fl-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0) {
            return "memfd_create failed: " + lib.strerror(rt.getLastError());
        }
        try {
            if (lib.fcntl(fd, F_ADD_SEALS, SEALS) != 0) {
                return "a memfd takes no seals here: " + lib.strerror(rt.getLastError());
            }
            return null;
        } finally {
            lib.close(fd);
        }
    }

    /**
     * @param name the file's name, as {@code /proc/PID/fd/FD} shows it ({@code /memfd:NAME (deleted)})
     * @return a new memfd, readable and writable by this user only, that takes seals
     * @throws IOException naming the call that failed and why
     */
    static int create(String name) throws IOException {
        return create(name, 0);
    }

    /** {@link #create(String)} with more {@code memfd_create} flags ({@link #MFD_HUGETLB}). */
    static int create(String name, int flags) throws IOException {
        available();
        int fd = LIBC.memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | flags);
        if (fd < 0) {
            throw failure("memfd_create(" + name + ")");
        }
        if (LIBC.fchmod(fd, 0600) != 0) { // memfds start with mode 0777: peers of other users must not open it
            IOException e = failure("fchmod(" + name + ", 0600)");
            LIBC.close(fd);
            throw e;
        }
        return fd;
    }

    /** Seals the file's size: from now on no process can shrink or grow it, or take the seals off. */
    static void seal(int fd, String name) throws IOException {
        if (LIBC.fcntl(fd, F_ADD_SEALS, SEALS) != 0) {
            throw failure("sealing " + name);
        }
    }

    /** @return the seals the file has ({@link #F_SEAL_SHRINK} and the rest) */
    static int seals(int fd, String name) throws IOException {
        int s = LIBC.fcntl(fd, F_GET_SEALS, 0);
        if (s < 0) {
            throw failure("reading the seals of " + name);
        }
        return s;
    }

    /**
     * Names a file without opening it ({@code O_PATH}), following links ({@code /proc/PID/fd/FD} is
     * one): no file system's open runs, so a peer's link to a file of a file system it serves itself
     * (FUSE) or to a device cannot stall or touch anything here.
     *
     * @throws IOException naming the file and why it could not be reached
     */
    static int path(String path) throws IOException {
        available();
        int fd = LIBC.open(path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
            throw failure("reaching " + path);
        }
        return fd;
    }

    /**
     * Opens, for reading and writing, the file a descriptor of this process names.
     *
     * @throws IOException naming the file and why it could not be opened
     */
    static int reopen(int fd, String name) throws IOException {
        int rw = LIBC.open("/proc/self/fd/" + fd, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (rw < 0) {
            throw failure("opening " + name);
        }
        return rw;
    }

    /** @return the type of the file system of the file the descriptor names ({@link #TMPFS_MAGIC} for a memfd) */
    static long fileSystemType(int fd, String name) throws IOException {
        jnr.ffi.Pointer buf = jnr.ffi.Memory.allocateDirect(RUNTIME, STATFS_SIZE);
        if (LIBC.fstatfs(fd, buf) != 0) {
            throw failure("reading the file system of " + name);
        }
        return buf.getLong(0);
    }

    static void close(int fd) {
        LIBC.close(fd);
    }

    private static void available() throws IOException {
        if (UNAVAILABLE != null) {
            throw new IOException("shm: sealed segments are unavailable here (" + UNAVAILABLE
                    + "): set fenceline.transport.shm.segments = files");
        }
    }

    private static IOException failure(String what) {
        int errno = RUNTIME.getLastError();
        return new IOException("shm: " + what + " failed: " + LIBC.strerror(errno) + " (errno " + errno + ")");
    }
}
