package dev.fenceline.perf;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * The target process of {@code fenceline perf --processes 2}: a worker with one region, a sink for
 * streamed active messages, and a handler that answers each ping with a pong over its own endpoint
 * back to the driver. Protocol on stdin/stdout: it prints {@code ADDRESS <worker> <region key>},
 * reads {@code PEER <driver worker>}, connects back, prints {@code READY}, and serves until stdin
 * closes. Arguments: the configuration as HOCON text (the tcp secret comes from the environment).
 */
public final class PerfTarget {
    private PerfTarget() {
    }

    /**
     * @param args {@code <region bytes> <HOCON configuration>}
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        org.slf4j.LoggerFactory.getILoggerFactory(); // before the actor system's threads race to (no replay warning)
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(args[1]).withFallback(ConfigFactory.load()))) {
            Worker w = f.newWorker("beta").toCompletableFuture().get(60, TimeUnit.SECONDS);
            MemoryRegion region = w.allocate(Integer.parseInt(args[0]));
            w.setActiveMessageHandler(PerfSession.SINK, (h, p) -> { });
            System.out.println("ADDRESS " + hex.formatHex(w.address().toBytes()) + " "
                    + hex.formatHex(region.remoteKey().toBytes()));
            System.out.flush();
            String peer = expect(in, "PEER ").substring(5);
            Endpoint back = w.connect(WorkerAddress.fromBytes(hex.parseHex(peer))).toCompletableFuture()
                    .get(60, TimeUnit.SECONDS);
            w.setActiveMessageHandler(PerfSession.PING, (h, p) -> back.sendActiveMessage(PerfSession.PONG, h, p));
            System.out.println("READY");
            System.out.flush();
            while (in.readLine() != null) {
                // serve until the driver closes stdin
            }
        }
    }

    /** Reads lines until one starts with {@code prefix}; fails if the stream ends first. */
    static String expect(BufferedReader in, String prefix) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new IOException("the other process ended before saying " + prefix.trim());
    }
}
