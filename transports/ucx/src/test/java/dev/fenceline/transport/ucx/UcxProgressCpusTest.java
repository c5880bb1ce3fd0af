package dev.fenceline.transport.ucx;

import dev.fenceline.affinity.CpuAffinity;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code progress-cpus} keeps the progress thread to the CPUs it names (the kernel says so in the
 * thread's {@code Cpus_allowed_list}); CPUs the process may not run on are refused, named.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxProgressCpusTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** @return each thread of this process's {@code Cpus_allowed_list} */
    private static List<String> allowedLists() throws IOException {
        List<String> lists = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("Cpus_allowed_list:")) {
                            lists.add(line.substring("Cpus_allowed_list:".length()).trim());
                        }
                    }
                } catch (IOException ended) {
                    // the thread ended meanwhile
                }
            }
        }
        return lists;
    }

    @Test
    void theProgressThreadRunsOnlyOnTheCpusNamed() throws Exception {
        java.util.BitSet ours = CpuAffinity.ofProcess();
        Assumptions.assumeTrue(ours.cardinality() >= 2, "one CPU only: a thread kept to it looks like any other");
        int last = ours.length() - 1;
        assertEquals(0, allowedLists().stream().filter(l -> l.equals(String.valueOf(last))).count(),
                "no thread is kept to CPU " + last + " before");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], progress-cpus = [" + last + "] }"))) {
            Worker w = f.newWorker("pinned").toCompletableFuture().get(20, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long kept;
            while ((kept = allowedLists().stream().filter(l -> l.equals(String.valueOf(last))).count()) == 0) {
                assertTrue(System.nanoTime() < deadline, "no thread kept to CPU " + last + ": " + allowedLists());
                Thread.sleep(10); // the agent pins itself when its thread starts
            }
            assertEquals(1, kept, "the worker's one progress thread, and no other: " + allowedLists());
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
