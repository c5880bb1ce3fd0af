package dev.fenceline.examples.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster demo as a test: three member JVMs on loopback, and (as root) each in its own network
 * namespace with two rails; one member killed with SIGKILL mid-run; the survivors lose and
 * duplicate nothing, and every request to the dead member ends truthfully.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ClusterDemoTest {
    private static Path config() {
        return Path.of(System.getProperty("fencelineTestConfigDir"), "cluster", "three-nodes.conf");
    }

    private static void runAndCheck(boolean netns, Path logs) throws Exception {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(text, true, StandardCharsets.UTF_8);
        ClusterDemo.Report r = ClusterDemo.run(new ClusterDemo.Options(3, 8, 6000, config(), netns, logs, out));
        String printed = text.toString(StandardCharsets.UTF_8);
        System.out.print(printed);
        assertTrue(r.ok(), r.problems() + "\n" + printed);
        assertEquals(2, r.toTheDead().size(), "each survivor reports its requests to the dead member");
        for (long[] t : r.toTheDead()) {
            assertTrue(t[1] + t[2] >= 1, "the kill fell mid-run: a request to the dead member failed");
        }
        assertTrue(r.checkedSlots() > 0, "slots were checked");
        assertTrue(r.removedAfterMs() < 60_000, "the dead member was removed: " + r.removedAfterMs() + " ms");
    }

    @Test
    void threeMembersOnLoopbackOneKilledMidRun(@TempDir Path logs) throws Exception {
        runAndCheck(false, logs);
    }

    @Test
    void threeMembersInNetworkNamespacesWithTwoRails(@TempDir Path logs) throws Exception {
        String why = Netns.unavailable();
        Assumptions.assumeTrue(why == null, why);
        runAndCheck(true, logs);
    }
}
