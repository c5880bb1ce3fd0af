package dev.fenceline.testkit.process;

import dev.fenceline.WorkerAddress;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A forked {@link PeerWorker}, on this JVM's class path: its process, its output, and what it
 * printed of its worker and regions. Closing it kills the process.
 *
 * @param process the process
 * @param out what it prints
 * @param address its worker's address
 * @param dataKey its data region's packed key
 * @param counterKey its counter region's packed key
 */
public record PeerWorkerProcess(Process process, BufferedReader out, WorkerAddress address, byte[] dataKey,
        byte[] counterKey) implements AutoCloseable {
    private static final HexFormat HEX = HexFormat.of();

    /**
     * @param log where its standard error goes
     * @param config its configuration (HOCON)
     * @param args PeerWorker's further arguments ({@code registered}: its regions are registered)
     * @return the running peer, once it printed its address
     * @throws IOException if it cannot start
     */
    public static PeerWorkerProcess fork(Path log, String config, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx256m", "-cp",
                System.getProperty("java.class.path"), PeerWorker.class.getName(), config));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("ADDRESS ")) {
            // skip
        }
        if (line == null) {
            p.destroyForcibly();
            throw new AssertionError("the peer process printed no address; its log:\n" + Files.readString(log));
        }
        String[] parts = line.split(" ");
        return new PeerWorkerProcess(p, out, WorkerAddress.fromBytes(HEX.parseHex(parts[1])), HEX.parseHex(parts[2]),
                HEX.parseHex(parts[3]));
    }

    @Override
    public void close() {
        dev.fenceline.testkit.ProcessFaults.kill(process);
    }
}
