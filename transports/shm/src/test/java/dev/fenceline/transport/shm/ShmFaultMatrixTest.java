package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.ProcessFaults;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fault matrix on shm between two processes: every kind of call (put, get, posted and fetching
 * atomic, active message, flush, fence) against the faults a shm peer suffers, at points around a
 * fence: the target process stopped (SIGSTOP) past keepalive before the fence, while the fenced
 * call is in flight, or after the flush, and resumed once every call has its outcome (what waited
 * in its inbox must then not apply); the target process killed (SIGKILL). The target's regions are
 * registered memory, so calls go through its inbox (the ring lane) or cross-memory attach (the cma
 * lane, which reaches a stopped process). Each cell is checked for lost, duplicated and stale
 * applications and for the truth of every outcome, as on the simulation and on tcp.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ShmFaultMatrixTest {
    enum Call { PUT, GET, ADD, FETCH_ADD, MESSAGE, FLUSH, FENCE }

    enum When { STOPPED_BEFORE_FENCE, STOPPED_WHILE_FENCING, STOPPED_AFTER_FLUSH, KILLED }

    private static final int CELL = 1024;
    private static final int COUNTERS = 512;

    @Test
    void everyCellHolds() throws Exception {
        Path logs = Files.createDirectories(Path.of("target", "two-process"));
        List<String> bad = new ArrayList<>();
        int cells = 0;
        long restarts = 0;
        long failed = 0;
        for (String mode : new String[] {"endpoint", "strong"}) {
            try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                    fenceline.transports = [shm]
                    fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                    fenceline.fence.mode = %s
                    """.formatted(mode)))) {
                Worker origin = f.newWorker("origin").toCompletableFuture().get(30, TimeUnit.SECONDS);
                PeerProcess peer = PeerProcess.fork(logs.resolve("fault-matrix.log"), "registered");
                try {
                    int cell = 0;
                    for (Call call : Call.values()) {
                        for (When when : When.values()) {
                            String r = run(origin, peer, cell++, call, when);
                            cells++;
                            if (r != null) {
                                bad.add(mode + " " + call + " x " + when + ": " + r);
                            }
                            if (when == When.KILLED) {
                                peer.close();
                                peer = PeerProcess.fork(logs.resolve("fault-matrix.log"), "registered");
                            }
                        }
                    }
                } finally {
                    peer.close();
                }
                restarts += origin.statistics().restarts();
                failed += origin.statistics().failed();
            }
        }
        System.out.println("shm fault matrix: " + cells + " cells, " + restarts + " restarts, " + failed
                + " calls failed, " + bad.size() + " violations");
        assertEquals(List.of(), bad);
        assertEquals(2 * Call.values().length * When.values().length, cells);
        assertTrue(restarts > 0, "calls waiting at a stopped peer were restarted: " + restarts);
        assertTrue(failed > 0, "calls to killed peers failed: " + failed);
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /** @return null if every check held, else what did not */
    private String run(Worker origin, PeerProcess peer, int cell, Call call, When when) throws Exception {
        RemoteKey key = origin.unpackRemoteKey(peer.dataKey());
        long base = key.baseAddress() + (long) cell * CELL;
        Endpoint raw = origin.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        long messagesBefore = when == When.KILLED ? 0 : messagesRun(origin, peer);
        History history = new History();
        Endpoint ep = history.record(raw);
        List<CompletableFuture<?>> calls = new ArrayList<>();
        List<CompletableFuture<?>> messages = new ArrayList<>();
        int step = 0;
        for (int i = 0; i < 3; i++) {
            step = issue(ep, call, i, step, base, key, calls, messages);
        }
        Thread.sleep(2);
        boolean stopped = false;
        if (when == When.STOPPED_BEFORE_FENCE) {
            stopped = stop(peer);
        } else if (when == When.KILLED) {
            peer.process().destroyForcibly();
        }
        ep.fence();
        if (call == Call.FENCE) {
            ep.fence();
        }
        step = issue(ep, call, 0, step, base, key, calls, messages);
        Thread.sleep(2);
        if (when == When.STOPPED_WHILE_FENCING) {
            stopped = stop(peer);
        }
        calls.add(ep.flush().toCompletableFuture());
        if (when == When.STOPPED_AFTER_FLUSH) {
            stopped = stop(peer);
        }
        issue(ep, call, 1, step, base, key, calls, messages);
        for (CompletableFuture<?> c : calls) {
            settle(c);
        }
        settle(raw.flush().toCompletableFuture());
        if (stopped) {
            ProcessFaults.resume(peer.process());
            Thread.sleep(300); // the resumed peer takes whatever still waits in its inbox (it must skip it)
        }
        StringBuilder bad = new StringBuilder();
        HistoryChecker check = HistoryChecker.of(history);
        try {
            check.assertEveryRequestCompleted().assertOutcomesTruthful().assertFlushesCovered();
            if (when != When.KILLED) {
                Map<Long, Long> memory = read(origin, peer, base, key);
                check.assertFencesHeld().assertExactlyOnce(a -> memory.getOrDefault(a, 0L));
                long ran = messagesRun(origin, peer) - messagesBefore;
                long ok = messages.stream().filter(m -> m.isDone() && !m.isCompletedExceptionally()).count();
                if (ran < ok || ran > messages.size()) {
                    bad.append(ran).append(" of ").append(messages.size()).append(" messages ran, ").append(ok)
                            .append(" succeeded; ");
                }
            }
        } catch (AssertionError e) {
            bad.append(e.getMessage()).append("; ");
        }
        settle(raw.close().toCompletableFuture());
        return bad.length() == 0 ? null : bad.toString();
    }

    private static boolean stop(PeerProcess peer) throws Exception {
        ProcessFaults.stop(peer.process(), Duration.ofSeconds(10));
        return true;
    }

    /** The cell's four words and four counters, read with a fresh endpoint once the peer runs again. */
    private static Map<Long, Long> read(Worker origin, PeerProcess peer, long base, RemoteKey key) throws Exception {
        Endpoint probe = origin.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        Map<Long, Long> memory = new HashMap<>();
        for (int w = 0; w < 4; w++) {
            for (long a : new long[] {base + 64L * w, base + COUNTERS + 8L * w}) {
                ByteBuffer b = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                probe.get(b, a, key).toCompletableFuture().get(10, TimeUnit.SECONDS);
                memory.put(a, b.getLong(0));
            }
        }
        probe.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return memory;
    }

    /** @return how many active messages the peer has run, from its REPORT */
    private static long messagesRun(Worker origin, PeerProcess peer) throws Exception {
        Endpoint probe = origin.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        probe.sendActiveMessage(ShmPeer.REPORT, null, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
        String line;
        while ((line = peer.out().readLine()) != null && !line.startsWith("STATE ")) {
            // skip
        }
        assertTrue(line != null, "the peer reported its state");
        probe.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return Long.parseLong(line.split(" ")[3]);
    }

    private static int issue(Endpoint ep, Call call, int w, int step, long base, RemoteKey key,
            List<CompletableFuture<?>> calls, List<CompletableFuture<?>> messages) {
        int word = w & 3;
        switch (call == Call.FENCE ? Call.PUT : call) { // a fence cell fences puts, fence upon fence
            case PUT -> calls.add(ep.put(word(step + 1), base + 64L * word, key).toCompletableFuture());
            case GET -> calls.add(ep.get(ByteBuffer.allocateDirect(8), base + 64L * word, key).toCompletableFuture());
            case ADD -> calls.add(ep.atomicPost64(AtomicOp.ADD, base + COUNTERS + 8L * word, key, 1)
                    .toCompletableFuture());
            case FETCH_ADD -> calls.add(ep.atomicFetch64(AtomicOp.ADD, base + COUNTERS + 8L * word, key, 1)
                    .toCompletableFuture());
            case MESSAGE -> {
                CompletableFuture<?> m = ep.sendActiveMessage(ShmPeer.MESSAGE, null, ByteBuffer.allocate(1))
                        .toCompletableFuture();
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
