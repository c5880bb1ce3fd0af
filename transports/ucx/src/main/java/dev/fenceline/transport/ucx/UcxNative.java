package dev.fenceline.transport.ucx;

import dev.fenceline.spi.support.BundledLibrary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

/**
 * Loads {@code libfenceline-uct} (built with this jar against the UCT headers of the build host)
 * and checks it against the UCX loaded with it: the library's ABI, its two record layouts, and the
 * headers' UCX version against libucp's (major and minor must match: UCT's ABI moves between minor
 * releases). If anything is missing or does not match, UCX is simply not offered, and
 * {@link #unavailabilityCause()} says why, in the manner of Netty's {@code Epoll}.
 */
public final class UcxNative {
    /** The ABI of the native library this class was written for ({@code FLU_ABI}). */
    static final int ABI = 5;

    private static final String RESOURCE = "/dev/fenceline/transport/ucx/native/linux-x86_64/libfenceline-uct.so";

    private static final Shim SHIM;
    private static final Runtime RUNTIME;
    private static final String UNAVAILABLE;
    private static final String VERSION;

    static {
        Shim shim = null;
        Runtime runtime = null;
        String why;
        String version = null;
        try {
            // No function reports through errno (each returns its status), so calls skip saving it
            shim = BundledLibrary.load(UcxNative.class, RESOURCE, "the ucx transport", "this build of the ucx"
                    + " transport has no native library (it was built without the UCX headers; install libucx-dev"
                    + " and gcc, then rebuild)", (lib, name) -> {
                        keepSignalsForTheJvm();
                        return LibraryLoader.create(Shim.class).option(jnr.ffi.LibraryOption.IgnoreError, true)
                                .search(lib.getParent().toString()).failImmediately().load(name);
                    });
            runtime = Runtime.getRuntime(shim);
            Ucp ucp = LibraryLoader.create(Ucp.class).failImmediately().load("libucp.so.0");
            int[] major = new int[1];
            int[] minor = new int[1];
            int[] release = new int[1];
            ucp.ucp_get_version(major, minor, release);
            int headers = shim.flu_header_version();
            version = major[0] + "." + minor[0] + "." + release[0];
            why = check(shim, headers, major[0], minor[0]);
        } catch (IOException | RuntimeException | LinkageError e) {
            why = e.getMessage() != null ? e.getMessage() : e.toString();
            shim = null;
        }
        SHIM = why == null ? shim : null;
        RUNTIME = runtime;
        UNAVAILABLE = why;
        VERSION = version;
    }

    private UcxNative() {
    }

    /** @return whether UCX can be used in this process */
    public static boolean isAvailable() {
        return UNAVAILABLE == null;
    }

    /** @return why UCX cannot be used, or null if it can */
    public static String unavailabilityCause() {
        return UNAVAILABLE;
    }

    /** @return the loaded UCX's version, "major.minor.release", or null if none was loaded */
    public static String version() {
        return VERSION;
    }

    private static volatile List<UctResource> resources;

    /**
     * @return the UCT resources of this host: every component, memory domain, transport and device
     *     (listed once per process: opening every memory domain takes milliseconds)
     * @throws UcxUnavailableException if UCX is not available
     */
    public static List<UctResource> resources() {
        List<UctResource> r = resources;
        if (r == null) {
            r = listResources();
            resources = r;
        }
        return r;
    }

    private static List<UctResource> listResources() {
        Shim shim = shim();
        byte[] buf = new byte[16 * 1024];
        long need = shim.flu_list_resources(buf, buf.length);
        if (need > buf.length) {
            buf = new byte[(int) need];
            need = shim.flu_list_resources(buf, buf.length);
        }
        if (need < 0) {
            throw new UctException("uct_query_components", (int) need, shim.flu_status_string((int) need));
        }
        List<UctResource> out = new ArrayList<>();
        for (String line : new String(buf, 0, (int) Math.min(need, buf.length), StandardCharsets.UTF_8).split("\n")) {
            String[] f = line.split("\t");
            if (f.length == 5) {
                out.add(new UctResource(f[0], f[1], f[2], f[3], f[4]));
            }
        }
        return List.copyOf(out);
    }

    static Shim shim() {
        if (SHIM == null) {
            throw new UcxUnavailableException(UNAVAILABLE);
        }
        return SHIM;
    }

    /** @return native memory of {@code bytes}, zeroed, freed when the pointer is collected */
    static Pointer allocate(int bytes) {
        Pointer p = Memory.allocateDirect(RUNTIME, bytes, true);
        return p;
    }

    /** libc's setenv, to configure UCX before it loads (it reads its environment once, at load). */
    public interface LibC {
        /**
         * @param name the variable
         * @param value its value
         * @param overwrite non-zero to replace a value already set
         * @return 0, or -1
         */
        int setenv(String name, String value, int overwrite);
    }

    /**
     * UCX installs handlers for SIGSEGV, SIGBUS and others to print a backtrace; the JVM uses
     * SIGSEGV itself (null checks, safepoint polls), and with UCX's handler in the way the JVM dies
     * at its first one. An empty {@code UCX_ERROR_SIGNALS} leaves the signals to the JVM. This is
     * done whatever the environment says, since any other value crashes the JVM.
     */
    private static void keepSignalsForTheJvm() {
        LibC libc = LibraryLoader.create(LibC.class).failImmediately().load("c");
        if (libc.setenv("UCX_ERROR_SIGNALS", "", 1) != 0) {
            throw new IllegalStateException("cannot set UCX_ERROR_SIGNALS before loading UCX");
        }
    }

    private static String check(Shim shim, int headers, int major, int minor) {
        if (shim.flu_abi() != ABI) {
            return "libfenceline-uct has ABI " + shim.flu_abi() + ", this jar needs " + ABI;
        }
        String layout = Layout.check(shim);
        if (layout != null) {
            return layout;
        }
        int hMajor = headers >>> 16;
        int hMinor = (headers >>> 8) & 0xff;
        if (hMajor != major || hMinor != minor) {
            return "libfenceline-uct was built against UCX " + hMajor + "." + hMinor + " headers but UCX " + major
                    + "." + minor + " is loaded; rebuild the ucx transport against the installed UCX";
        }
        return null;
    }
}
