package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import dev.fenceline.affinity.CpuAffinity;
import java.util.BitSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code polling-cpus} keeps each worker's polling thread to the CPUs it names (the kernel's
 * affinity of each thread of the process says so), and the workers still talk; CPUs the process
 * may not run on are refused, named (ShmSettingsTest: lists that are not CPU numbers).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmPollingCpusTest {
    /** @return how many threads of this process are kept to {@code cpu} alone */
    private static long keptTo(int cpu) {
        BitSet only = new BitSet();
        only.set(cpu);
        return CpuAffinity.ofEveryThread().values().stream().filter(only::equals).count();
    }

    @Test
    void eachWorkersPollingThreadRunsOnlyOnTheCpusNamed() throws Exception {
        BitSet ours = CpuAffinity.ofProcess();
        Assumptions.assumeTrue(ours.cardinality() >= 2, "one CPU only: a thread kept to it looks like any other");
        int last = ours.length() - 1;
        assertEquals(0, keptTo(last), "no thread is kept to CPU " + last + " before");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]\n"
                + "fenceline.transport.shm.polling-cpus = [" + last + "]"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(20, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(20, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long kept;
            while ((kept = keptTo(last)) < 2) {
                assertTrue(System.nanoTime() < deadline, "not both polling threads kept to CPU " + last + ": "
                        + CpuAffinity.ofEveryThread());
                Thread.sleep(10); // each polling thread pins itself when it starts
            }
            assertEquals(2, kept, "the two workers' polling threads, and no other: " + CpuAffinity.ofEveryThread());
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(20, TimeUnit.SECONDS);
            ep.flush().toCompletableFuture().get(20, TimeUnit.SECONDS); // through b's inbox and back
        }
    }

    @Test
    void cpusTheProcessMayNotRunOnAreRefusedNamed() throws Exception {
        BitSet ours = CpuAffinity.ofProcess();
        int outside = ours.nextClearBit(0);
        Assumptions.assumeTrue(outside < CpuAffinity.MAX_CPUS, "every CPU number is the process's");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]\n"
                + "fenceline.transport.shm.polling-cpus = [" + outside + "]"))) {
            Throwable e = assertThrows(ExecutionException.class,
                    () -> f.newWorker("refused").toCompletableFuture().get(20, TimeUnit.SECONDS)).getCause();
            while (e != null && !(e instanceof ConfigurationException)) {
                e = e.getCause();
            }
            assertTrue(e != null && e.getMessage().contains("fenceline.transport.shm.polling-cpus = [" + outside + "]"),
                    String.valueOf(e));
        }
    }
}
