package dev.fenceline.perf;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * The target side of a two-process run: a worker with one region, a sink for streamed active
 * messages, and a handler that answers each ping with a pong over its own endpoint back to the
 * driver. It runs as a child process ({@code --processes 2}, talking over stdin/stdout) or as
 * {@code fenceline perf --server} (talking over a control connection). Protocol, one line each:
 * it reads {@code REGION <bytes>}, prints {@code ADDRESS <worker> <region key>}, reads
 * {@code PEER <driver worker>}, connects back, prints {@code READY}, and serves until the driver
 * closes its side.
 */
public final class PerfTarget {
    private PerfTarget() {
    }

    /**
     * The child process's entry.
     *
     * @param args {@code <HOCON configuration>} (the tcp secret comes from the environment)
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        org.slf4j.LoggerFactory.getILoggerFactory(); // before the actor system's threads race to (no replay warning)
        serve(ConfigFactory.parseString(args[0]).withFallback(ConfigFactory.load()),
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII)), System.out);
    }

    /**
     * Serves one driver.
     *
     * @param config the runtime's configuration
     * @param in the driver's lines
     * @param out lines to the driver
     * @throws Exception if the worker cannot start or the driver breaks the protocol
     */
    static void serve(Config config, BufferedReader in, PrintStream out) throws Exception {
        HexFormat hex = HexFormat.of();
        String region = expect(in, "REGION ").substring(7).trim();
        int bytes;
        try {
            bytes = Integer.parseInt(region);
        } catch (NumberFormatException e) {
            throw new IOException("the driver asked for a region of '" + region + "' bytes");
        }
        if (bytes < 64 || bytes > (1 << 30)) {
            throw new IOException("the driver asked for a region of " + bytes + " bytes: expected 64 to 1 GiB");
        }
        try (Fenceline f = Fenceline.create(config)) {
            Worker w = f.newWorker("beta").toCompletableFuture().get(60, TimeUnit.SECONDS);
            MemoryRegion target = w.allocate(bytes);
            w.setActiveMessageHandler(PerfSession.SINK, (h, p) -> { });
            out.println("ADDRESS " + hex.formatHex(w.address().toBytes()) + " "
                    + hex.formatHex(target.remoteKey().toBytes()));
            out.flush();
            String peer = expect(in, "PEER ").substring(5);
            Endpoint back = w.connect(WorkerAddress.fromBytes(hex.parseHex(peer))).toCompletableFuture()
                    .get(60, TimeUnit.SECONDS);
            w.setActiveMessageHandler(PerfSession.PING, (h, p) -> back.sendActiveMessage(PerfSession.PONG, h, p));
            out.println("READY");
            out.flush();
            while (in.readLine() != null) {
                // serve until the driver closes its side
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
        throw new IOException("the other side ended before saying " + prefix.trim());
    }
}
