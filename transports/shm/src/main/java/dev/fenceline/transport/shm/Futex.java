package dev.fenceline.transport.shm;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Platform;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

/**
 * Linux futexes on a word of a shared mapping, through {@code syscall(2)} bound by jnr-ffi: a thread
 * waits while the word holds a value, and a thread of any process that maps the same file wakes it
 * (a shared futex, keyed by the file's page, not by the address in one process).
 */
final class Futex {
    /** The libc entry point; public at the class-file level for jnr-ffi's generated class. */
    public interface Calls {
        /**
         * @param number the system call
         * @param address the futex word
         * @param op the futex operation
         * @param value the expected value (wait) or how many to wake
         * @param timeout a relative {@code struct timespec}, or null
         * @return the call's result, -1 on error
         */
        long syscall(long number, long address, long op, long value, Pointer timeout);
    }

    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final Calls CALLS;
    private static final Runtime RUNTIME;
    private static final long SYS_FUTEX;
    private static final String UNAVAILABLE;

    static {
        Calls calls = null;
        Runtime rt = null;
        long number = -1;
        String why = null;
        try {
            Platform p = Platform.getNativePlatform();
            if (p.getOS() != Platform.OS.LINUX) {
                why = "not Linux";
            } else {
                number = switch (p.getCPU()) {
                    case X86_64 -> 202;
                    case AARCH64 -> 98;
                    default -> -1;
                };
                if (number < 0) {
                    why = "no futex system call number known for " + p.getCPU();
                } else {
                    calls = LibraryLoader.create(Calls.class).failImmediately().load("c");
                    rt = Runtime.getRuntime(calls);
                }
            }
        } catch (RuntimeException | LinkageError e) {
            why = "jnr-ffi could not bind libc: " + e;
            calls = null;
        }
        CALLS = calls;
        RUNTIME = rt;
        SYS_FUTEX = number;
        UNAVAILABLE = why;
    }

    private Futex() {
    }

    /** @return why futexes cannot be used here, or null if they can */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /** @return a {@code struct timespec} for {@link #await}, owned by one waiting thread */
    static Pointer timespec() {
        return jnr.ffi.Memory.allocateDirect(RUNTIME, 16);
    }

    /**
     * Sleeps while the word at {@code address} holds {@code expected}, until woken or the time
     * passes (or a signal: a spurious return, which callers tolerate).
     *
     * @param address the word's address in this process
     * @param expected the value it held when the caller decided to sleep
     * @param nanos the longest sleep
     * @param timespec the caller's own {@link #timespec()}
     */
    static void await(long address, int expected, long nanos, Pointer timespec) {
        timespec.putLong(0, nanos / 1_000_000_000L);
        timespec.putLong(8, nanos % 1_000_000_000L);
        CALLS.syscall(SYS_FUTEX, address, FUTEX_WAIT, expected & 0xFFFFFFFFL, timespec);
    }

    /**
     * Wakes a thread sleeping on the word at {@code address}.
     *
     * @param address the word's address in this process
     */
    static void wake(long address) {
        CALLS.syscall(SYS_FUTEX, address, FUTEX_WAKE, 1, null);
    }
}
