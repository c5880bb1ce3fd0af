package dev.fenceline.testkit.process;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The two worker processes of a rail-failover test, each started inside its own network namespace
 * ({@link Netns}) on the configuration in the environment variable {@value #CONFIG} (HOCON, over
 * the defaults). {@code target}: serves memory and prints {@code ADDRESS <worker> <data key>
 * <counter key>} (hex). {@code origin ADDRESS DATAKEY COUNTERKEY}: streams puts and atomics with
 * fences until stdin says STOP, printing {@code PROGRESS <ms> <iterations> lanes=...} every 100 ms
 * ({@link RailOrigin} reads them), then verifies the target's memory and prints {@code RESULT}.
 * Each iteration i does put(block i % 16), ADD(counter, 1), fence, FETCH_ADD(counter, 0): the
 * fetch must return i + 1 or i + 2 (the fence orders every earlier ADD before it; only the next
 * iteration's ADD may overtake it), so a lost fence or a doubly applied ADD is caught.
 */
public final class RailPeer {
    /** The environment variable that holds both processes' configuration. */
    public static final String CONFIG = "FENCELINE_PEER_CONFIG";
    static final int BLOCKS = 16;
    static final int BLOCK = 4096;
    private static final HexFormat HEX = HexFormat.of();

    private RailPeer() {
    }

    /**
     * @param mode {@code target}, or {@code origin} and what the target printed
     * @return the command that runs it on this JVM's class path (for {@link Netns#start})
     */
    public static List<String> command(String... mode) {
        List<String> cmd = new ArrayList<>(List.of(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), "-Xmx256m", RailPeer.class.getName()));
        cmd.addAll(List.of(mode));
        return cmd;
    }

    /**
     * @param args {@code target}, or {@code origin ADDRESS DATAKEY COUNTERKEY}
     * @throws Exception if the worker fails
     */
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "target" -> target();
            case "origin" -> System.exit(origin(args[1], args[2], args[3]));
            default -> throw new IllegalArgumentException("mode " + args[0]);
        }
    }

    private static Fenceline runtime() {
        String config = System.getenv(CONFIG);
        if (config == null) {
            throw new IllegalStateException("no configuration in " + CONFIG);
        }
        return Fenceline.create(ConfigFactory.parseString(config).withFallback(ConfigFactory.load()));
    }

    private static void target() throws Exception {
        try (Fenceline f = runtime()) {
            Worker w = f.newWorker("netns-target").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion data = w.allocate((long) BLOCKS * BLOCK);
            MemoryRegion counter = w.allocate(64);
            System.out.println("ADDRESS " + HEX.formatHex(w.address().toBytes()) + " "
                    + HEX.formatHex(data.remoteKey().toBytes()) + " " + HEX.formatHex(counter.remoteKey().toBytes()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the test closes stdin or kills this process
            }
        }
    }

    static byte pattern(long iteration, int offset) {
        return (byte) (iteration * 31 + offset * 7 + 1);
    }

    private static int origin(String address, String dataKey, String counterKey) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null && !line.equals("STOP")) {
                    // wait for STOP
                }
            } catch (java.io.IOException ignored) {
                // treated as STOP
            }
            stop.set(true);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        try (Fenceline f = runtime()) {
            Worker w = f.newWorker("netns-origin").toCompletableFuture().get(30, TimeUnit.SECONDS);
            Endpoint ep = w.connect(WorkerAddress.fromBytes(HEX.parseHex(address))).toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            RemoteKey data = w.unpackRemoteKey(HEX.parseHex(dataKey));
            RemoteKey counter = w.unpackRemoteKey(HEX.parseHex(counterKey));
            System.out.println("CONNECTED " + lanes(ep));
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            AtomicLong iterations = new AtomicLong();
            Thread progress = new Thread(() -> {
                long t0 = System.nanoTime();
                while (!stop.get()) {
                    System.out.println("PROGRESS " + (System.nanoTime() - t0) / 1_000_000 + " " + iterations.get() + " "
                            + lanes(ep));
                    System.out.flush();
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "progress");
            progress.setDaemon(true);
            progress.start();
            Semaphore window = new Semaphore(32);
            long[] lastWriter = new long[BLOCKS];
            long i = 0;
            while (!stop.get()) {
                window.acquire();
                long it = i;
                int block = (int) (i % BLOCKS);
                ByteBuffer src = ByteBuffer.allocateDirect(BLOCK);
                for (int o = 0; o < BLOCK; o++) {
                    src.put(o, pattern(it, o));
                }
                lastWriter[block] = it;
                CompletableFuture<Void> put = ep.put(src, data.baseAddress() + (long) block * BLOCK, data)
                        .toCompletableFuture();
                CompletableFuture<Void> add = ep.atomicPost64(AtomicOp.ADD, counter.baseAddress(), counter, 1)
                        .toCompletableFuture();
                ep.fence();
                CompletableFuture<Long> fetch = ep.atomicFetch64(AtomicOp.ADD, counter.baseAddress(), counter, 0)
                        .toCompletableFuture();
                CompletableFuture.allOf(put, add, fetch).whenComplete((v, e) -> {
                    if (e != null) {
                        errors.add("iteration " + it + " failed: " + e);
                    } else if (fetch.join() != it + 1 && fetch.join() != it + 2) {
                        errors.add("iteration " + it + ": FETCH_ADD after the fence saw " + fetch.join()
                                + ", expected " + (it + 1) + " or " + (it + 2));
                    }
                    iterations.incrementAndGet();
                    window.release();
                });
                i++;
            }
            window.acquire(32);
            ep.flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
            long count = ep.atomicFetch64(AtomicOp.ADD, counter.baseAddress(), counter, 0).toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            if (count != i) {
                errors.add("the counter holds " + count + " after " + i + " ADDs (lost or applied twice)");
            }
            List<String> blockErrors = new ArrayList<>();
            for (int b = 0; b < BLOCKS && i >= BLOCKS; b++) {
                ByteBuffer dst = ByteBuffer.allocateDirect(BLOCK);
                ep.get(dst, data.baseAddress() + (long) b * BLOCK, data).toCompletableFuture().get(30, TimeUnit.SECONDS);
                for (int o = 0; o < BLOCK; o++) {
                    if (dst.get(o) != pattern(lastWriter[b], o)) {
                        blockErrors.add("block " + b + " byte " + o + " is not iteration " + lastWriter[b] + "'s");
                        break;
                    }
                }
            }
            errors.addAll(blockErrors);
            System.out.println("RESULT " + (errors.isEmpty() ? "ok" : "FAILED") + " iterations=" + i + " counter="
                    + count + " " + lanes(ep) + " errors=" + errors.stream().limit(10).toList());
            System.out.flush();
            return errors.isEmpty() ? 0 : 1;
        }
    }

    /** lanes as index:live:connection, e.g. {@code lanes=0:up:17,1:up:18}. */
    static String lanes(Endpoint ep) {
        StringBuilder b = new StringBuilder("lanes=");
        for (LaneInfo l : ep.lanes()) {
            b.append(l.index() == 0 ? "" : ",").append(l.index()).append(':').append(l.live() ? "up" : "down")
                    .append(':').append(l.connectionId());
        }
        return b.toString();
    }
}
