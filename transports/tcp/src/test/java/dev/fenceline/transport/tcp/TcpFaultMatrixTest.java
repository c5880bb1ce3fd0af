package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fault matrix on the real tcp transport: every kind of call (put, get, posted and fetching
 * atomic, active message, flush, fence) against each fault a tcp rail can suffer at a point around
 * a fence: rail 0 cut before the fence, while the fenced call is in flight, or after the flush; rail
 * 0 cut and healed at once (the rail reconnects: its lane is replaced); the target stalled on rail
 * 0 past keepalive (its bytes wait in the path and arrive after the endpoint gave the lane up and
 * fenced later work went over rail 1); the target worker closed. Each cell runs on a fresh target
 * worker and endpoint with two rails and is checked, as on the simulation, for lost, duplicated and
 * stale applications and for the truth of every outcome.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class TcpFaultMatrixTest {
    enum Call { PUT, GET, ADD, FETCH_ADD, MESSAGE, FLUSH, FENCE }

    enum When { CUT_BEFORE_FENCE, CUT_WHILE_FENCING, CUT_AFTER_FLUSH, RAIL_REPLACED, TARGET_STALLED, TARGET_CLOSED }

    private static final int MESSAGE_ID = 31;
    private static final int COUNTERS = 512;
    private final Map<Long, AtomicInteger> ran = new ConcurrentHashMap<>();
    private final AtomicInteger runs = new AtomicInteger();
    private long unknown;
    private long failed;

    @Test
    void everyCellHolds() throws Exception {
        Config origins = ConfigFactory.parseString("""
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                fenceline.transport.tcp.connect-timeout = 1s
                fenceline.transport.tcp.reconnect { min-backoff = 20ms, max-backoff = 100ms }
                """).withFallback(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0"));
        List<String> bad = new ArrayList<>();
        Map<When, Long> restartsBy = new java.util.EnumMap<>(When.class);
        int cells = 0;
        long restarts = 0;
        try (Fenceline targets = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0"))) {
            for (String mode : new String[] {"endpoint", "strong"}) {
                try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.fence.mode = " + mode)
                        .withFallback(origins))) {
                    Worker origin = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
                    for (Call call : Call.values()) {
                        for (When when : When.values()) {
                            long before = origin.statistics().restarts();
                            String r = run(targets, origin, call, when);
                            restartsBy.merge(when, origin.statistics().restarts() - before, Long::sum);
                            cells++;
                            if (r != null) {
                                bad.add(mode + " " + call + " x " + when + ": " + r);
                            }
                        }
                    }
                    restarts += origin.statistics().restarts();
                    failed += origin.statistics().failed();
                }
            }
        }
        System.out.println("tcp fault matrix: " + cells + " cells, " + restarts + " restarts " + restartsBy + ", "
                + failed + " calls failed (" + unknown + " with an unknown outcome), " + bad.size() + " violations");
        assertEquals(List.of(), bad);
        assertEquals(2 * Call.values().length * When.values().length, cells);
        assertTrue(restarts > 0, "the faults hit calls in flight: " + restarts + " restarts");
        assertTrue(restartsBy.get(When.TARGET_STALLED) > 0, "calls waiting at a stalled target were restarted"
                + " elsewhere (and their first copies then arrived): " + restartsBy);
        assertTrue(failed > 0, "calls to closed targets failed: " + failed);
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /** @return null if every check held, else what did not */
    private String run(Fenceline targets, Worker origin, Call call, When when) throws Exception {
        int run = runs.incrementAndGet();
        Worker target = targets.newWorker("target-" + run).toCompletableFuture().get(10, TimeUnit.SECONDS);
        MemoryRegion region = target.allocate(4096);
        target.setActiveMessageHandler(MESSAGE_ID, (h, p) -> ran.computeIfAbsent(
                h.order(ByteOrder.nativeOrder()).getLong(0), k -> new AtomicInteger()).incrementAndGet());
        List<InetSocketAddress> rails = TcpAddress.decode(target.address().transportAddress("tcp"));
        try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
            WorkerAddress viaRelay = new WorkerAddress(target.address().workerId(), target.address().name(),
                    Map.of("tcp", TcpAddress.encode(List.of(relay.address(), rails.get(1)))));
            Endpoint raw = origin.connect(viaRelay).toCompletableFuture().get(10, TimeUnit.SECONDS);
            History history = new History();
            Endpoint ep = history.record(raw);
            RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
            long base = region.address();
            List<CompletableFuture<?>> calls = new ArrayList<>();
            List<Long> tags = new ArrayList<>();
            List<CompletableFuture<?>> messages = new ArrayList<>();
            int step = 0;
            for (int i = 0; i < 3; i++) {
                step = issue(ep, call, i, step, run, base, key, calls, tags, messages);
            }
            Thread.sleep(2); // some copies arrive, some answers are still on their way
            switch (when) {
                case CUT_BEFORE_FENCE -> relay.cut();
                case RAIL_REPLACED -> {
                    relay.cut();
                    relay.heal();
                }
                case TARGET_STALLED -> relay.hold();
                case TARGET_CLOSED -> target.close(); // not awaited: it races what is in flight, as a crash would
                default -> { }
            }
            ep.fence();
            if (call == Call.FENCE) {
                ep.fence();
            }
            step = issue(ep, call, 0, step, run, base, key, calls, tags, messages);
            Thread.sleep(2);
            if (when == When.CUT_WHILE_FENCING) {
                relay.cut();
            }
            calls.add(ep.flush().toCompletableFuture());
            if (when == When.CUT_AFTER_FLUSH) {
                relay.cut();
            }
            step = issue(ep, call, 1, step, run, base, key, calls, tags, messages);
            for (CompletableFuture<?> c : calls) {
                settle(c);
            }
            settle(raw.flush().toCompletableFuture());
            relay.release(); // a stalled target resumes: what waited on rail 0 arrives now
            relay.heal();
            Thread.sleep(when == When.TARGET_STALLED ? 300 : 0); // the target takes the stale bytes
            ByteBuffer memory = region.buffer().order(ByteOrder.nativeOrder());
            StringBuilder bad = new StringBuilder();
            try {
                HistoryChecker.of(history).assertEveryRequestCompleted().assertFencesHeld().assertFlushesCovered()
                        .assertOutcomesTruthful().assertExactlyOnce(a -> memory.getLong((int) (a - base)));
            } catch (AssertionError e) {
                bad.append(e.getMessage()).append("; ");
            }
            for (int m = 0; m < tags.size(); m++) {
                AtomicInteger n = ran.get(tags.get(m));
                int times = n == null ? 0 : n.get();
                boolean ok = messages.get(m).isDone() && !messages.get(m).isCompletedExceptionally();
                if (times > 1 || (ok && times != 1)) {
                    bad.append("message ").append(m).append(" ran ").append(times).append(" times, outcome ")
                            .append(ok ? "success" : "failure").append("; ");
                }
            }
            for (CompletableFuture<?> c : calls) {
                if (c.isCompletedExceptionally()) {
                    try {
                        c.join();
                    } catch (java.util.concurrent.CompletionException e) {
                        unknown += e.getCause() instanceof OutcomeUnknownException ? 1 : 0;
                    }
                }
            }
            settle(raw.close().toCompletableFuture());
            if (when != When.TARGET_CLOSED) {
                settle(target.close().toCompletableFuture());
            }
            return bad.length() == 0 ? null : bad.toString();
        }
    }

    private int issue(Endpoint ep, Call call, int w, int step, int run, long base, RemoteKey key,
            List<CompletableFuture<?>> calls, List<Long> tags, List<CompletableFuture<?>> messages) {
        int word = w & 3;
        switch (call == Call.FENCE ? Call.PUT : call) { // a fence cell fences puts, fence upon fence
            case PUT -> calls.add(ep.put(word(step + 1), base + 64L * word, key).toCompletableFuture());
            case GET -> calls.add(ep.get(ByteBuffer.allocate(8), base + 64L * word, key).toCompletableFuture());
            case ADD -> calls.add(ep.atomicPost64(AtomicOp.ADD, base + COUNTERS + 8L * word, key, 1)
                    .toCompletableFuture());
            case FETCH_ADD -> calls.add(ep.atomicFetch64(AtomicOp.ADD, base + COUNTERS + 8L * word, key, 1)
                    .toCompletableFuture());
            case MESSAGE -> {
                long tag = ((long) run << 20) | step;
                CompletableFuture<?> m = ep.sendActiveMessage(MESSAGE_ID, word(tag), ByteBuffer.allocate(0))
                        .toCompletableFuture();
                tags.add(tag);
                messages.add(m);
                calls.add(m);
            }
            case FLUSH -> calls.add(ep.flush().toCompletableFuture());
            default -> throw new IllegalArgumentException(call.toString());
        }
        return step + 1;
    }

    private static void settle(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException failedOrStuck) {
            // checked through the history (a call still open after 30 s fails assertEveryRequestCompleted)
        }
    }
}
