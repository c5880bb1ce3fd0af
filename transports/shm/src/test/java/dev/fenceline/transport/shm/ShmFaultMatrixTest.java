package dev.fenceline.transport.shm;

import dev.fenceline.testkit.process.PeerWorker;
import dev.fenceline.testkit.process.PeerWorkerProcess;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.ProcessFaults;
import dev.fenceline.testkit.FaultCell;
import dev.fenceline.testkit.StallWatchdog;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 * applications and for the truth of every outcome, as on the simulation and on tcp. Calls to a
 * stopped peer get a few seconds for their outcomes, then the peer resumes and the rest settle: an
 * atomic it had taken when it stopped is answered only when it runs again, and work fenced behind
 * that atomic rightly waits for the answer (waiting 30 s for each such call made two cells in three
 * runs take minutes).
 *
 * <p>The default suite runs every (call, fault point) cell once, the fence mode alternating from cell
 * to cell (28 cells, about a minute); {@code -Dfenceline.faults.full=true} runs every cell in both
 * fence modes (56 cells, about two minutes).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ShmFaultMatrixTest {
    private static final String SHM = "fenceline.transports = [shm]";
    enum When { STOPPED_BEFORE_FENCE, STOPPED_WHILE_FENCING, STOPPED_AFTER_FLUSH, KILLED }

    private static final int CELL = 1024;
    /** How long calls to a stopped peer get before it resumes: the keepalive timeout and then some. */
    private static final Duration STOPPED_PATIENCE = Duration.ofSeconds(8);

    @Test
    void everyCellHolds() throws Exception {
        Path logs = Files.createDirectories(Path.of("target", "two-process"));
        List<String> bad = new ArrayList<>();
        boolean full = Boolean.getBoolean("fenceline.faults.full");
        int cells = 0;
        long restarts = 0;
        long failed = 0;
        // One run in three under the module's suite took 90 s longer in one cell; say where, if it recurs.
        try (StallWatchdog dog = StallWatchdog.start("shm fault matrix", Duration.ofSeconds(20), System.out)) {
            String[] modes = {"endpoint", "strong"};
            for (int m = 0; m < modes.length; m++) {
                String mode = modes[m];
                try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                        fenceline.transports = [shm]
                        fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                        fenceline.fence.mode = %s
                        """.formatted(mode)))) {
                    Worker origin = f.newWorker("origin").toCompletableFuture().get(30, TimeUnit.SECONDS);
                    PeerWorkerProcess peer = PeerWorkerProcess.fork(logs.resolve("fault-matrix.log"), SHM,
                            "registered");
                    try {
                        int cell = 0;
                        for (FaultCell.Call call : FaultCell.Call.values()) {
                            for (When when : When.values()) {
                                int index = call.ordinal() * When.values().length + when.ordinal();
                                if (!full && index % modes.length != m) {
                                    continue; // the other mode runs this cell
                                }
                                dog.beat(mode + " " + call + " x " + when);
                                String r = run(origin, peer, cell++, call, when);
                                cells++;
                                if (r != null) {
                                    bad.add(mode + " " + call + " x " + when + ": " + r);
                                }
                                if (when == When.KILLED) {
                                    peer.close();
                                    peer = PeerWorkerProcess.fork(logs.resolve("fault-matrix.log"), SHM,
                            "registered");
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
        }
        System.out.println("shm fault matrix: " + cells + " cells, " + restarts + " restarts, " + failed
                + " calls failed, " + bad.size() + " violations");
        assertEquals(List.of(), bad);
        assertEquals((full ? 2 : 1) * FaultCell.Call.values().length * When.values().length, cells);
        assertTrue(restarts > 0, "calls waiting at a stopped peer were restarted: " + restarts);
        assertTrue(failed > 0, "calls to killed peers failed: " + failed);
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /** @return null if every check held, else what did not */
    private String run(Worker origin, PeerWorkerProcess peer, int cell, FaultCell.Call call, When when) throws Exception {
        RemoteKey key = origin.unpackRemoteKey(peer.dataKey());
        long base = key.baseAddress() + (long) cell * CELL;
        Endpoint raw = origin.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        long messagesBefore = when == When.KILLED ? 0 : messagesRun(origin, peer);
        FaultCell c = new FaultCell(raw, key, base, PeerWorker.MESSAGE);
        Runnable fault = when == When.KILLED ? () -> peer.process().destroyForcibly() : () -> {
            try {
                ProcessFaults.stop(peer.process(), Duration.ofSeconds(10));
            } catch (Exception e) {
                throw new IllegalStateException("cannot stop the peer process", e);
            }
        };
        // A stopped peer may hold its calls' outcomes until it runs again (an atomic it had taken is
        // answered then, and work fenced behind it waits for that): they get a while, then it resumes.
        c.run(call, switch (when) {
            case STOPPED_WHILE_FENCING -> FaultCell.Point.WHILE_FENCING;
            case STOPPED_AFTER_FLUSH -> FaultCell.Point.AFTER_FLUSH;
            default -> FaultCell.Point.BEFORE_FENCE;
        }, fault, when == When.KILLED ? Duration.ofSeconds(30) : STOPPED_PATIENCE);
        String bad;
        if (when == When.KILLED) {
            bad = c.check(null, null, 0);
        } else {
            ProcessFaults.resume(peer.process());
            c.settle(Duration.ofSeconds(30));
            Thread.sleep(300); // the resumed peer takes whatever still waits in its inbox (it must skip it)
            Map<Long, Long> memory = read(origin, peer, c.addresses(), key);
            bad = c.check(a -> memory.getOrDefault(a, 0L), null, messagesRun(origin, peer) - messagesBefore);
        }
        raw.close().toCompletableFuture().handle((v, e) -> null).get(30, TimeUnit.SECONDS);
        return bad;
    }

    /** The cell's words and counters, read with a fresh endpoint once the peer runs again. */
    private static Map<Long, Long> read(Worker origin, PeerWorkerProcess peer, long[] addresses, RemoteKey key)
            throws Exception {
        Endpoint probe = origin.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        Map<Long, Long> memory = new HashMap<>();
        for (long a : addresses) {
            ByteBuffer b = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            probe.get(b, a, key).toCompletableFuture().get(10, TimeUnit.SECONDS);
            memory.put(a, b.getLong(0));
        }
        probe.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return memory;
    }

    /** @return how many active messages the peer has run, from its REPORT */
    private static long messagesRun(Worker origin, PeerWorkerProcess peer) throws Exception {
        Endpoint probe = origin.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        probe.sendActiveMessage(PeerWorker.REPORT, null, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
        String line;
        while ((line = peer.out().readLine()) != null && !line.startsWith("STATE ")) {
            // skip
        }
        assertTrue(line != null, "the peer reported its state");
        probe.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return Long.parseLong(line.split(" ")[3]);
    }
}
