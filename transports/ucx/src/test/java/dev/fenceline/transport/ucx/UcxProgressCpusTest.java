package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import dev.fenceline.affinity.CpuAffinity;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code progress-cpus} keeps the progress thread to the CPUs it names (the kernel's affinity of
 * each thread of the process says so); CPUs the process may not run on are refused, named.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxProgressCpusTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** @return how many threads of this process are kept to {@code cpu} alone */
    private static long keptTo(int cpu) {
        java.util.BitSet only = new java.util.BitSet();
        only.set(cpu);
        return CpuAffinity.ofEveryThread().values().stream().filter(only::equals).count();
    }

    @Test
    void theProgressThreadRunsOnlyOnTheCpusNamed() throws Exception {
        java.util.BitSet ours = CpuAffinity.ofProcess();
        Assumptions.assumeTrue(ours.cardinality() >= 2, "one CPU only: a thread kept to it looks like any other");
        int last = ours.length() - 1;
        assertEquals(0, keptTo(last), "no thread is kept to CPU " + last + " before");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], progress-cpus = [" + last + "] }"))) {
            Worker w = f.newWorker("pinned").toCompletableFuture().get(20, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long kept;
            while ((kept = keptTo(last)) == 0) {
                assertTrue(System.nanoTime() < deadline, "no thread kept to CPU " + last + ": "
                        + CpuAffinity.ofEveryThread());
                Thread.sleep(10); // the agent pins itself when its thread starts
            }
            assertEquals(1, kept, "the worker's one progress thread, and no other: " + CpuAffinity.ofEveryThread());
            assertTrue(w.address().transports().contains("ucx"));
        }
    }

    @Test
    void cpusTheProcessMayNotRunOnAreRefusedNamed() throws Exception {
        java.util.BitSet ours = CpuAffinity.ofProcess();
        int outside = ours.nextClearBit(0);
        Assumptions.assumeTrue(outside < CpuAffinity.MAX_CPUS, "every CPU number is the process's");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], progress-cpus = [" + outside + "] }"))) {
            Throwable e = assertThrows(ExecutionException.class,
                    () -> f.newWorker("refused").toCompletableFuture().get(20, TimeUnit.SECONDS)).getCause();
            while (e != null && !(e instanceof ConfigurationException)) {
                e = e.getCause();
            }
            assertTrue(e != null && e.getMessage().contains("fenceline.transport.ucx.progress-cpus = [" + outside + "]"),
                    String.valueOf(e));
        }
    }
}
