package dev.fenceline.demo;

import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fenceline demo-target}: the second process of {@code demo --processes 2}. It holds the
 * target memory, prints {@code ADDRESS <worker> <data key> <counter key>} and, when asked with an
 * active message, the digest of its own memory, so the driver can check that what it verified
 * through the transport is what this process holds. Serves until its stdin closes.
 */
@Command(name = "demo-target", hidden = true, description = "The target process of demo --processes 2.")
public final class DemoTarget implements Callable<Integer> {
    static final int DIGEST = 2;
    static final int COUNTERS = 64;

    @Option(names = "--transport", required = true)
    String transport;

    @Option(names = "--region", defaultValue = "1048576")
    int regionBytes;

    @Override
    public Integer call() throws Exception {
        try (Fenceline f = Fenceline.create(DemoCommand.config(transport, null, true))) {
            Worker w = f.newWorker("beta").toCompletableFuture().get(60, TimeUnit.SECONDS);
            MemoryRegion data = w.allocate(regionBytes);
            MemoryRegion counters = w.allocate(COUNTERS * 8L);
            w.setActiveMessageHandler(DIGEST, (h, p) -> {
                System.out.println("DIGEST " + digest(data.buffer(), counters.buffer()));
                System.out.flush();
            });
            HexFormat hex = HexFormat.of();
            System.out.println("ADDRESS " + hex.formatHex(w.address().toBytes()) + " "
                    + hex.formatHex(data.remoteKey().toBytes()) + " " + hex.formatHex(counters.remoteKey().toBytes()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the driver closes stdin
            }
            return 0;
        }
    }

    static String digest(ByteBuffer data, ByteBuffer counters) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(data.duplicate().clear());
            md.update(counters.duplicate().clear());
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // a mandatory JDK algorithm
        }
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
