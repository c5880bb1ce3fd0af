package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import java.util.BitSet;
import java.util.List;
import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;

/**
 * The CPUs a thread may run on (Linux's {@code sched_setaffinity} for the calling thread): where the
 * progress thread goes when {@code progress-cpus} names them. Two progress threads that share a core
 * wait for each other's spinning, so a deployment that wants the latency gives each a core.
 */
final class CpuAffinity {
    /** The CPU numbers a mask here holds: 0 to 1023, as glibc's {@code cpu_set_t}. */
    static final int MAX_CPUS = 1024;

    /** libc's affinity calls: on the calling thread (pid 0), or on the thread whose id is given. */
    public interface Sched {
        /**
         * @param pid 0: the calling thread
         * @param size the mask's bytes
         * @param mask one bit per CPU
         * @return 0, or -1 with errno set
         */
        @SaveError
        int sched_setaffinity(int pid, long size, @In byte[] mask);

        /**
         * @param pid 0: the calling thread; else a thread id (a process's id: its main thread)
         * @param size the mask's bytes
         * @param mask filled with one bit per CPU (glibc zeroes what the kernel does not write)
         * @return 0, or -1 with errno set
         */
        @SaveError
        int sched_getaffinity(int pid, long size, @Out byte[] mask);
    }

    private static volatile Sched sched;

    private CpuAffinity() {
    }

    private static Sched sched() {
        Sched s = sched;
        if (s == null) {
            s = LibraryLoader.create(Sched.class).failImmediately().load("c");
            sched = s;
        }
        return s;
    }

    /** @return the CPUs the calling thread may run on */
    static BitSet ofThisThread() {
        return of(0);
    }

    /**
     * @return the CPUs this process's main thread may run on (Linux keeps a set per thread; the main
     *     thread's is what the process was started with, whatever a thread that makes a worker narrowed)
     */
    static BitSet ofProcess() {
        return of((int) ProcessHandle.current().pid());
    }

    private static BitSet of(int tid) {
        byte[] mask = new byte[MAX_CPUS / 8];
        if (sched().sched_getaffinity(tid, mask.length, mask) < 0) {
            throw new FencelineException("sched_getaffinity failed: errno " + errno());
        }
        return BitSet.valueOf(mask);
    }

    /**
     * Keeps the calling thread to {@code cpus}.
     *
     * @param cpus CPU numbers, 0 to {@value #MAX_CPUS} - 1
     * @throws FencelineException with the kernel's errno if it refuses (a CPU outside the process's set)
     */
    static void pinThisThread(List<Integer> cpus) {
        BitSet set = new BitSet(MAX_CPUS);
        for (int cpu : cpus) {
            set.set(cpu);
        }
        byte[] mask = java.util.Arrays.copyOf(set.toByteArray(), MAX_CPUS / 8);
        if (sched().sched_setaffinity(0, mask.length, mask) != 0) {
            throw new FencelineException("sched_setaffinity to CPUs " + cpus + " failed: errno " + errno());
        }
    }

    /**
     * The progress thread, at its start: kept to {@code cpus} if any, else left where it is; a
     * refusal is logged and the thread runs where it was.
     *
     * @param cpus the {@code progress-cpus} setting
     * @param worker the worker's name, for the log
     */
    static void keepThisThreadTo(List<Integer> cpus, String worker) {
        if (cpus.isEmpty()) {
            return;
        }
        try {
            pinThisThread(cpus);
        } catch (FencelineException e) {
            org.slf4j.LoggerFactory.getLogger(CpuAffinity.class).warn("ucx {}: the progress thread stays where it"
                    + " was: {}", worker, e.getMessage());
        }
    }

    private static int errno() {
        return jnr.ffi.LastError.getLastError(jnr.ffi.Runtime.getSystemRuntime());
    }
}
