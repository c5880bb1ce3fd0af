package dev.fenceline.transport.shm;

import jnr.ffi.Pointer;
import jnr.ffi.annotations.SaveError;

/**
 * The two libc calls of cross-memory attach, bound by jnr-ffi. The iovec parameters are
 * {@link Pointer}s on purpose: a signature of six integer arguments goes through jnr-ffi's x86-64
 * assembly stub, which passes a corrupted sixth argument (jnr/jnr-ffi#181, present in 2.3.4); a
 * Pointer parameter takes the generic path. {@code CmaTest} checks that {@code flags} (the sixth)
 * arrives as 0.
 *
 * <p>The class is package-private; the interface inside must be public at the class-file level,
 * because jnr-ffi generates its implementation in a class loader of its own.
 */
final class LibC {
    private LibC() {
    }

    /** The bound functions. */
    public interface Calls {
        @SaveError
            long process_vm_writev(int pid, Pointer localIov, long localCount, Pointer remoteIov, long remoteCount,
                long flags);

        @SaveError
        long process_vm_readv(int pid, Pointer localIov, long localCount, Pointer remoteIov, long remoteCount,
                long flags);
    }
}
