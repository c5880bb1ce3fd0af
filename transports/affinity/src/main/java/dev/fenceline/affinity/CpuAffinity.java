package dev.fenceline.affinity;

import dev.fenceline.ConfigurationException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.ConfigReader;
import java.util.BitSet;
import java.util.List;
import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;

/**
 * The CPUs a thread may run on (Linux's {@code sched_setaffinity} for the calling thread): where a
 * transport's polling or progress thread goes when its settings name CPUs. Two such threads that
 * share a core wait for each other's spinning, so a deployment that wants the latency gives each a
 * core.
 */
public final class CpuAffinity {
    /** The CPU numbers a mask here holds: 0 to 1023, as glibc's {@code cpu_set_t}. */
    public static final int MAX_CPUS = 1024;
    /** No such process or thread. */
    private static final int ESRCH = 3;

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

    /**
     * @return the CPUs the calling thread may run on
     * @throws FencelineException with the kernel's errno if it cannot be read
     */
    public static BitSet ofThisThread() {
        return of(0);
    }

    /**
     * @return the CPUs this process's main thread may run on (Linux keeps a set per thread; the main
     *     thread's is what the process was started with, whatever a thread that makes a worker narrowed)
     * @throws FencelineException with the kernel's errno if it cannot be read
     */
    public static BitSet ofProcess() {
        return of((int) ProcessHandle.current().pid());
    }

    /**
     * @return the CPUs each thread of this process may run on, by thread id (a thread that ends
     *     while they are read is left out): where a pinned thread shows, for tests and diagnostics
     */
    public static java.util.Map<Integer, BitSet> ofEveryThread() {
        java.util.Map<Integer, BitSet> sets = new java.util.TreeMap<>();
        try (java.util.stream.Stream<java.nio.file.Path> tasks = java.nio.file.Files.list(
                java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path task : tasks.toList()) {
                int tid = Integer.parseInt(task.getFileName().toString());
                byte[] mask = new byte[MAX_CPUS / 8];
                if (sched().sched_getaffinity(tid, mask.length, mask) == 0) {
                    sets.put(tid, BitSet.valueOf(mask));
                    continue;
                }
                int err = errno();
                if (err != ESRCH) { // ESRCH: the thread ended meanwhile
                    throw new FencelineException("sched_getaffinity of thread " + tid + " failed: errno " + err);
                }
            }
        } catch (java.io.IOException e) {
            throw new FencelineException("cannot list this process's threads: " + e, e);
        }
        return sets;
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
     * @throws FencelineException if a number is outside that range, or with the kernel's errno if it
     *     refuses (a CPU outside the process's set)
     */
    public static void pinThisThread(List<Integer> cpus) {
        BitSet set = new BitSet(MAX_CPUS);
        for (int cpu : cpus) {
            if (cpu < 0 || cpu >= MAX_CPUS) {
                throw new FencelineException("CPU " + cpu + " is outside 0 to " + (MAX_CPUS - 1));
            }
            set.set(cpu);
        }
        byte[] mask = java.util.Arrays.copyOf(set.toByteArray(), MAX_CPUS / 8);
        if (sched().sched_setaffinity(0, mask.length, mask) != 0) {
            throw new FencelineException("sched_setaffinity to CPUs " + cpus + " failed: errno " + errno());
        }
    }

    /**
     * A polling or progress thread, at its start: kept to {@code cpus} if any, else left where it
     * is; a refusal is logged and the thread runs where it was.
     *
     * @param cpus the setting's CPUs
     * @param thread which thread this is, for the log (say "ucx worker-a: the progress thread")
     */
    public static void keepThisThreadTo(List<Integer> cpus, String thread) {
        if (cpus.isEmpty()) {
            return;
        }
        try {
            pinThisThread(cpus);
        } catch (FencelineException e) {
            org.slf4j.LoggerFactory.getLogger(CpuAffinity.class).warn("{} stays where it was: {}", thread,
                    e.getMessage());
        }
    }

    /**
     * Reads a CPU-list setting (empty by default: the thread stays where the process runs).
     *
     * @param r the section's reader
     * @param key the setting, in the section
     * @return distinct CPU numbers, each 0 to {@value #MAX_CPUS} - 1 (whether the process may run on
     *     them is {@link #checkProcessMayRun}'s to say)
     * @throws dev.fenceline.ConfigurationException naming the setting, its value and what it expects
     */
    public static List<Integer> cpusSetting(ConfigReader r, String key) {
        String expected = "a list of distinct CPU numbers, each 0 to " + (MAX_CPUS - 1);
        List<Integer> cpus;
        try {
            cpus = r.config().getIntList(key);
        } catch (com.typesafe.config.ConfigException e) {
            String v = r.config().hasPath(key) ? r.config().getValue(key).render() : "<unset>";
            throw r.invalid(key, v, expected);
        } finally {
            r.markRead(key);
        }
        if (cpus.stream().anyMatch(c -> c < 0 || c >= MAX_CPUS) || cpus.stream().distinct().count() < cpus.size()) {
            throw r.invalid(key, cpus.toString(), expected);
        }
        return List.copyOf(cpus);
    }

    /**
     * @param cpus a CPU-list setting's value
     * @param setting its full name, for the refusal
     * @throws ConfigurationException if the process's main thread may not run on one of them (a
     *     worker's start refuses the setting at once rather than log a refused pin later)
     */
    public static void checkProcessMayRun(List<Integer> cpus, String setting) {
        if (cpus.isEmpty()) {
            return;
        }
        BitSet ours = ofProcess();
        for (int cpu : cpus) {
            if (!ours.get(cpu)) {
                throw new ConfigurationException(setting + " = " + cpus + " is invalid: expected CPUs this process"
                        + " may run on (its main thread's), " + ours);
            }
        }
    }

    private static int errno() {
        return jnr.ffi.LastError.getLastError(jnr.ffi.Runtime.getSystemRuntime());
    }
}
