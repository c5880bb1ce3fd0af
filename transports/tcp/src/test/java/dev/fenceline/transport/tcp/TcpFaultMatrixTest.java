package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.testkit.FaultCell;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
    enum When { CUT_BEFORE_FENCE, CUT_WHILE_FENCING, CUT_AFTER_FLUSH, RAIL_REPLACED, TARGET_STALLED, TARGET_CLOSED }

    private static final int MESSAGE_ID = 31;
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
                    for (FaultCell.Call call : FaultCell.Call.values()) {
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
        assertEquals(2 * FaultCell.Call.values().length * When.values().length, cells);
        assertTrue(restarts > 0, "the faults hit calls in flight: " + restarts + " restarts");
        assertTrue(restartsBy.get(When.TARGET_STALLED) > 0, "calls waiting at a stalled target were restarted"
                + " elsewhere (and their first copies then arrived): " + restartsBy);
        assertTrue(failed > 0, "calls to closed targets failed: " + failed);
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /** @return null if every check held, else what did not */
    private String run(Fenceline targets, Worker origin, FaultCell.Call call, When when) throws Exception {
        int run = runs.incrementAndGet();
        Worker target = targets.newWorker("target-" + run).toCompletableFuture().get(10, TimeUnit.SECONDS);
        MemoryRegion region = target.allocate(4096);
        target.setActiveMessageHandler(MESSAGE_ID, (h, p) -> ran.computeIfAbsent(FaultCell.tagOf(h),
                k -> new AtomicInteger()).incrementAndGet());
        List<InetSocketAddress> rails = TcpAddress.decode(target.address().transportAddress("tcp"));
        try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
            WorkerAddress viaRelay = new WorkerAddress(target.address().workerId(), target.address().name(),
                    Map.of("tcp", TcpAddress.encode(List.of(relay.address(), rails.get(1)))));
            Endpoint raw = origin.connect(viaRelay).toCompletableFuture().get(10, TimeUnit.SECONDS);
            RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
            FaultCell cell = new FaultCell(raw, key, region.address(), MESSAGE_ID);
            Runnable fault = switch (when) {
                case CUT_BEFORE_FENCE, CUT_WHILE_FENCING, CUT_AFTER_FLUSH -> relay::cut;
                case RAIL_REPLACED -> () -> {
                    relay.cut();
                    relay.heal();
                };
                case TARGET_STALLED -> relay::hold;
                case TARGET_CLOSED -> target::close; // not awaited: it races what is in flight, as a crash would
            };
            cell.run(call, switch (when) {
                case CUT_WHILE_FENCING -> FaultCell.Point.WHILE_FENCING;
                case CUT_AFTER_FLUSH -> FaultCell.Point.AFTER_FLUSH;
                default -> FaultCell.Point.BEFORE_FENCE;
            }, fault);
            relay.release(); // a stalled target resumes: what waited on rail 0 arrives now
            relay.heal();
            Thread.sleep(when == When.TARGET_STALLED ? 300 : 0); // the target takes the stale bytes
            ByteBuffer memory = region.buffer().order(ByteOrder.nativeOrder());
            String bad = cell.check(a -> memory.getLong((int) (a - region.address())), tag -> {
                AtomicInteger n = ran.get(tag);
                return n == null ? 0 : n.get();
            }, -1);
            unknown += cell.unknown();
            raw.close().toCompletableFuture().handle((v, e) -> null).get(30, TimeUnit.SECONDS);
            if (when != When.TARGET_CLOSED) {
                target.close().toCompletableFuture().handle((v, e) -> null).get(30, TimeUnit.SECONDS);
            }
            return bad;
        }
    }
}
