package dev.fenceline.transport.shm;

import com.kenai.jffi.MemoryIO;
import java.nio.ByteBuffer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

/**
 * Cross-memory attach: one copy between this process and another's memory by address
 * ({@code process_vm_writev}/{@code readv}). One instance per lane, used by one thread at a time:
 * it owns its two iovecs and a staging buffer for heap sources.
 */
final class Cma {
    private static final LibC.Calls LIBC;
    private static final Runtime RUNTIME;
    private static final String UNAVAILABLE;

    static {
        LibC.Calls lib = null;
        Runtime rt = null;
        String why = null;
        try {
            lib = LibraryLoader.create(LibC.Calls.class).load("c");
            rt = Runtime.getRuntime(lib);
            why = ptraceRestricted();
            if (why == null) {
                why = probe(lib, rt);
            }
        } catch (RuntimeException | LinkageError e) {
            why = "jnr-ffi could not bind libc: " + e;
        }
        LIBC = lib;
        RUNTIME = rt;
        UNAVAILABLE = why;
    }

    private final Pointer local;
    private final Pointer remote;
    private final ByteBuffer staging;

    Cma(int maxFragment) {
        local = Memory.allocateDirect(RUNTIME, 16);
        remote = Memory.allocateDirect(RUNTIME, 16);
        staging = ByteBuffer.allocateDirect(maxFragment);
    }

    /** @return why cross-memory attach cannot be used here, or null if it can */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /**
     * Yama's ptrace_scope 1 or more lets a process reach only its descendants: reading itself works,
     * reaching a peer process would not. Say so rather than offer a lane that fails with EPERM.
     */
    private static String ptraceRestricted() {
        try {
            String scope = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/yama/ptrace_scope"))
                    .trim();
            return scope.equals("0") ? null : "Yama ptrace_scope is " + scope + ": peers cannot be reached";
        } catch (java.io.IOException e) {
            return null; // no Yama: the classic same-user rule applies
        }
    }

    /** Reads 8 bytes of this very process through the syscall: the cheapest proof that it is allowed. */
    private static String probe(LibC.Calls lib, Runtime rt) {
        ByteBuffer src = ByteBuffer.allocateDirect(8).putLong(0, 0x0123456789ABCDEFL);
        ByteBuffer dst = ByteBuffer.allocateDirect(8);
        Pointer l = Memory.allocateDirect(rt, 16);
        Pointer r = Memory.allocateDirect(rt, 16);
        l.putAddress(0, MemoryIO.getInstance().getDirectBufferAddress(dst));
        l.putLong(8, 8);
        r.putAddress(0, MemoryIO.getInstance().getDirectBufferAddress(src));
        r.putLong(8, 8);
        long n = lib.process_vm_readv((int) ProcessHandle.current().pid(), l, 1, r, 1, 0);
        if (n != 8) {
            return "process_vm_readv is not allowed here (errno " + rt.getLastError()
                    + "; a container's seccomp profile or ptrace restrictions forbid it)";
        }
        return dst.getLong(0) == src.getLong(0) ? null : "process_vm_readv returned wrong bytes";
    }

    /**
     * Copies {@code src} (position to limit) to {@code address} in process {@code pid}.
     *
     * @return null on success, else the errno
     */
    Integer write(long pid, long address, ByteBuffer src) {
        int n = src.remaining();
        long from;
        if (src.isDirect()) {
            from = MemoryIO.getInstance().getDirectBufferAddress(src) + src.position();
        } else {
            staging.clear().put(0, src, src.position(), n);
            from = MemoryIO.getInstance().getDirectBufferAddress(staging);
        }
        return transfer(true, pid, from, address, n);
    }

    /** Copies {@code dst.remaining()} bytes from {@code address} in process {@code pid} into {@code dst}. */
    Integer read(long pid, long address, ByteBuffer dst) {
        int n = dst.remaining();
        if (dst.isDirect()) {
            return transfer(false, pid, MemoryIO.getInstance().getDirectBufferAddress(dst) + dst.position(), address, n);
        }
        Integer error = transfer(false, pid, MemoryIO.getInstance().getDirectBufferAddress(staging), address, n);
        if (error == null) {
            dst.put(dst.position(), staging, 0, n);
        }
        return error;
    }

    private Integer transfer(boolean write, long pid, long localAddress, long remoteAddress, int n) {
        local.putAddress(0, localAddress);
        local.putLong(8, n);
        remote.putAddress(0, remoteAddress);
        remote.putLong(8, n);
        long done = write ? LIBC.process_vm_writev((int) pid, local, 1, remote, 1, 0)
                : LIBC.process_vm_readv((int) pid, local, 1, remote, 1, 0);
        if (done == n) {
            return null;
        }
        // A partial transfer means the remote range is not (all) mapped: report it like a failure.
        return done < 0 ? RUNTIME.getLastError() : Integer.valueOf(14); // EFAULT
    }
}
