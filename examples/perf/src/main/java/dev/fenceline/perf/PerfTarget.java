package dev.fenceline.perf;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.io.IOException;
import java.io.PrintStream;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * The target side of a two-process run: a worker with one region, a sink for streamed active
 * messages, and a handler that answers each ping with a pong over its own endpoint back to the
 * driver. It runs as a child process ({@code --processes 2}, talking over stdin/stdout) or as
 * {@code fenceline perf --server} (talking over a control connection). Protocol, one line each:
 * it reads {@code REGION <bytes>}, prints {@code ADDRESS <worker> <region key>}, reads
 * {@code PEER <driver worker>}, connects back, prints {@code READY}, and serves until the driver
 * closes its side, answering each {@code JIT} with {@code JIT <milliseconds spent compiling>}.
 */
public final class PerfTarget {
    /** The server's first line, followed by its transport: tells a driver it reached the right program. */
    static final String GREETING = "FENCELINE-PERF 2";
    /** The longest line either side accepts (addresses and keys are a few hundred characters). */
    private static final int MAX_LINE = 4096;

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
        serve(ConfigFactory.parseString(args[0]).withFallback(ConfigFactory.load()), System.in, System.out, () -> { });
    }

    /** What to do once the driver is connected back (lift set-up time limits). */
    interface SetUp {
        void done() throws IOException;
    }

    /**
     * Serves one driver.
     *
     * @param config the runtime's configuration
     * @param in the driver's lines
     * @param out lines to the driver
     * @param setUp called once the driver is connected back
     * @throws Exception if the worker cannot start or the driver breaks the protocol
     */
    static void serve(Config config, java.io.InputStream in, PrintStream out, SetUp setUp) throws Exception {
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
            // Implicit: the handler's buffers are copied before it returns; flushed below.
            w.setActiveMessageHandler(PerfSession.PING, (h, p) -> back.sendActiveMessageImplicit(PerfSession.PONG, h,
                    p));
            out.println("READY");
            out.flush();
            setUp.done();
            // Serve until the driver closes its side. Its DONE comes first: the pongs are flushed then,
            // while the driver's worker still answers (after it closed, a flush could only fail).
            boolean flushed = false;
            JitSettle.CompileTime compiling = JitSettle.thisJvm();
            for (String line; (line = readLine(in)) != null;) {
                if (line.equals("JIT")) { // the driver waits for this process's compilers too after a warm-up
                    out.println("JIT " + compiling.millis());
                    out.flush();
                } else if (line.equals("DONE") && !flushed) {
                    flushed = true;
                    try {
                        back.flush().toCompletableFuture().get(30, TimeUnit.SECONDS); // a failed pong fails here
                    } catch (java.util.concurrent.ExecutionException e) {
                        out.println("FLUSH-FAILED " + e.getCause());
                        out.flush();
                        throw new IOException("the pongs' flush failed: " + e.getCause(), e.getCause());
                    }
                    // Closed before the driver's worker goes, so that going is not this endpoint's failure.
                    back.close().toCompletableFuture().get(30, TimeUnit.SECONDS);
                    out.println("FLUSHED");
                    out.flush();
                }
            }
        }
    }

    /** Reads lines until one starts with {@code prefix}; fails if the stream ends first. */
    static String expect(java.io.InputStream in, String prefix) throws IOException {
        String line;
        while ((line = readLine(in)) != null) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new IOException("the other side ended before saying " + prefix.trim());
    }

    /**
     * One ASCII line, unbuffered (so nothing past it is consumed), at most {@value #MAX_LINE}
     * characters.
     *
     * @return the line without its end, or null at the end of the stream
     */
    static String readLine(java.io.InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                return b.toString();
            }
            if (b.length() >= MAX_LINE) {
                throw new IOException("a line of more than " + MAX_LINE + " characters from the other side");
            }
            b.append((char) c);
        }
        return b.length() == 0 ? null : b.toString();
    }
}
