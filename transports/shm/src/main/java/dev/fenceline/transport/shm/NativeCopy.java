package dev.fenceline.transport.shm;

import com.kenai.jffi.MemoryIO;
import dev.fenceline.spi.support.BundledLibrary;
import java.io.IOException;
import java.nio.ByteBuffer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.LibraryOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copy of a large put into a peer's sealed segment, by {@code libfenceline-shm} (built with
 * this jar where gcc was installed): the CPU's string move, which here copies a mebibyte about a
 * sixth faster than the JVM's copy (docs/performance.md). Only into memory no process can shrink
 * under the copy, a sealed segment: a fault inside native code ends the process, where the JVM's
 * own copy throws an {@link InternalError}. Where the library is missing or does not load, large
 * puts take the JVM's copy and {@link #unavailable()} says why.
 */
final class NativeCopy {
    private static final Logger LOG = LoggerFactory.getLogger(NativeCopy.class);
    /** The ABI of the native library this class was written for ({@code FLC_ABI}). */
    static final int ABI = 1;
    private static final String RESOURCE = "/dev/fenceline/transport/shm/native/linux-x86_64/libfenceline-shm.so";

    /** The library's functions; public at the class-file level for jnr-ffi's class loader. */
    public interface Calls {
        int flc_abi();

        void flc_copy(long dst, long src, long n);
    }

    private static final Calls LIB;
    private static final String UNAVAILABLE;

    static {
        Calls lib = null;
        String why;
        try {
            lib = BundledLibrary.load(NativeCopy.class, RESOURCE, "libfenceline-shm", "this build of the shm transport has no native"
                    + " library (it was built without gcc)", (file, name) -> LibraryLoader.create(Calls.class)
                            .option(LibraryOption.IgnoreError, true).search(file.getParent().toString())
                            .failImmediately().load(name));
            why = lib.flc_abi() != ABI ? "libfenceline-shm has ABI " + lib.flc_abi() + ", this jar needs " + ABI
                    : probe(lib);
        } catch (IOException | RuntimeException | LinkageError e) {
            why = e.getMessage() != null ? e.getMessage() : e.toString();
        }
        LIB = why == null ? lib : null;
        UNAVAILABLE = why;
        if (why != null) {
            LOG.debug("shm: large puts take the JVM's copy: {}", why);
        }
    }

    private NativeCopy() {
    }

    /** @return why the native copy cannot be used here, or null if it can */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /**
     * Copies {@code n} bytes by address. The caller keeps both memories reachable and mapped across the
     * call, and checked the range.
     *
     * @param dst in a sealed segment's mapping
     * @param src in a direct buffer
     */
    static void copy(long dst, long src, long n) {
        LIB.flc_copy(dst, src, n);
    }

    /** Copies a pattern between two buffers of this process: the cheapest proof that the copy works. */
    private static String probe(Calls lib) {
        ByteBuffer from = ByteBuffer.allocateDirect(4099);
        ByteBuffer to = ByteBuffer.allocateDirect(4099 + 5);
        for (int i = 0; i < from.capacity(); i++) {
            from.put(i, (byte) (i * 31 + 7));
        }
        MemoryIO io = MemoryIO.getInstance();
        lib.flc_copy(io.getDirectBufferAddress(to) + 3, io.getDirectBufferAddress(from), from.capacity());
        for (int i = 0; i < from.capacity(); i++) {
            if (to.get(i + 3) != from.get(i)) {
                return "libfenceline-shm's copy is wrong at byte " + i;
            }
        }
        return to.get(2) == 0 && to.get(3 + from.capacity()) == 0 ? null : "libfenceline-shm's copy wrote outside its range";
    }
}
