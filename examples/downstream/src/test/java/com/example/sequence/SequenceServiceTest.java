package com.example.sequence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fenceline.Fenceline;
import dev.fenceline.testkit.SimNetwork;
import dev.fenceline.testkit.junit.FencelineTest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The service tested with Fenceline's test kit: simulated lanes, one of them failed mid-run. */
@FencelineTest(config = "fenceline.transport.sim.lanes = ["
        + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 30us },"
        + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 30us } ]\n"
        + "fenceline.transport.sim.direct-access = off")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SequenceServiceTest {
    @Test
    void numbersStayUniqueWhileALaneFails(Fenceline fenceline, SimNetwork net) throws Exception {
        SequenceService host = SequenceService.start(fenceline.system(), "host").toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        byte[] key = host.hostCounter();
        List<SequenceService.Sequence> clients = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            SequenceService node = SequenceService.start(fenceline.system(), "node" + c).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            clients.add(node.connect(host.address(), host.counterAddress(), key).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS));
        }
        List<CompletableFuture<Long>> taken = new ArrayList<>();
        for (int i = 0; i < 900; i++) {
            SequenceService.Sequence s = clients.get(i % 3);
            taken.add(s.next().toCompletableFuture());
            if (i == 450) {
                net.failLane(s.endpoint(), 1); // the service must not notice
            }
        }
        Set<Long> numbers = new TreeSet<>();
        for (CompletableFuture<Long> f : taken) {
            numbers.add(f.get(10, TimeUnit.SECONDS));
        }
        assertEquals(900, numbers.size(), "no number twice");
        assertEquals(0L, ((TreeSet<Long>) numbers).first());
        assertEquals(899L, ((TreeSet<Long>) numbers).last(), "and none lost");
    }

    @Test
    void reservingNothingIsRefused(Fenceline fenceline) throws Exception {
        SequenceService host = SequenceService.start(fenceline.system(), "refusing").toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        byte[] key = host.hostCounter();
        SequenceService.Sequence s = host.connect(host.address(), host.counterAddress(), key).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        assertThrows(IllegalArgumentException.class, () -> s.reserve(0));
        assertEquals(0L, s.reserve(10).toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals(10L, s.next().toCompletableFuture().get(10, TimeUnit.SECONDS));
    }

    /** The service's own main, on the production transport (tcp over loopback). */
    @Nested
    class OverTcp {
        @Test
        void mainPrintsFiveNumbers() throws Exception {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            long sum = Main.run(new PrintStream(out, true, StandardCharsets.UTF_8), 5);
            assertEquals(0 + 1 + 2 + 3 + 4, sum);
            assertEquals(List.of("number 0", "number 1", "number 2", "number 3", "number 4"),
                    out.toString(StandardCharsets.UTF_8).lines().toList());
        }
    }
}
