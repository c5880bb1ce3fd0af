package dev.fenceline.testkit.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.fenceline.Fenceline;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.slf4j.LoggerFactory;

/**
 * What the extension tells the build about a test, seen by running a fixture class through JUnit's
 * own engine: the seed as a report entry, and log lines only for the test that failed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencelineExtensionReportTest {
    /** Run only through the engine below (the build does not pick up nested classes). */
    @FencelineTest(seed = 1234)
    static class Fixture {
        @Test
        void passes(Fenceline fenceline) {
            LoggerFactory.getLogger(Fixture.class).warn("line of the passing test");
            assertEquals(List.of("sim"), fenceline.transports());
        }

        @Test
        void fails(Fenceline fenceline) {
            LoggerFactory.getLogger(Fixture.class).warn("line of the failing test");
            assertEquals(List.of("not sim"), fenceline.transports());
        }
    }

    @Test
    void seedsAreReportedAndOnlyAFailingTestsLogIsPrinted() {
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EngineExecutionResults results;
        try {
            PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8);
            System.setOut(capture);
            System.setErr(capture);
            results = EngineTestKit.engine("junit-jupiter").selectors(selectClass(Fixture.class)).execute();
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        results.testEvents().assertStatistics(s -> s.started(2).succeeded(1).failed(1));
        List<Map<String, String>> entries = results.allEvents().reportingEntryPublished().stream()
                .map(e -> e.getPayload(ReportEntry.class).orElseThrow().getKeyValuePairs()).toList();
        assertEquals(List.of(Map.of(FencelineExtension.SEED_ENTRY, "1234"), Map.of(FencelineExtension.SEED_ENTRY,
                "1234")), entries, "one seed entry per test");
        assertTrue(printed.contains("line of the failing test"), printed);
        assertTrue(printed.contains("--- log of failed test Fixture#fails ---"), printed);
        assertTrue(!printed.contains("line of the passing test"), "a passing test's log is held back: " + printed);
        assertTrue(printed.contains("failed with sim seed 1234; rerun with FENCELINE_TEST_SEED=1234"), printed);
        Event failed = results.testEvents().failed().list().get(0);
        assertTrue(failed.getTestDescriptor().getDisplayName().startsWith("fails"), failed.toString());
    }
}
