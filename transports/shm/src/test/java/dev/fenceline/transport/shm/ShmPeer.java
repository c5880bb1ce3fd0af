package dev.fenceline.transport.shm;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The target process of the two-process tests: a worker on the shm transport with a data region
 * and a counter region. It prints {@code ADDRESS <worker> <data key> <counter key>}, counts active
 * messages (id 1), and on a VERIFY message (id 2, header: the expected SHA-256 of both regions and
 * the expected message count and byte sum) checks its own memory and prints the verdict.
 */
final class ShmPeer {
    static final int DATA = 1 << 20;
    static final int COUNTERS = 64;
    static final int MESSAGE = 1;
    static final int VERIFY = 2;
    /** Takes a millisecond each: messages queue up unanswered behind it. */
    static final int SLOW = 3;
    /** Prints {@code STATE <first data word> <first counter> <messages>} (header: none). */
    static final int REPORT = 4;

    private ShmPeer() {
    }

    /**
     * @param args {@code registered}: the regions are registered memory, which peers reach through
     *     the inbox and cross-memory attach, not shared segments they write directly
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        boolean registered = args.length > 0 && args[0].equals("registered");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]")
                .withFallback(ConfigFactory.load()))) {
            Worker w = f.newWorker("peer").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion data = registered ? w.register(ByteBuffer.allocateDirect(DATA)) : w.allocate(DATA);
            MemoryRegion counters = registered ? w.register(ByteBuffer.allocateDirect(COUNTERS * 8))
                    : w.allocate(COUNTERS * 8L);
            AtomicLong count = new AtomicLong();
            AtomicLong sum = new AtomicLong();
            w.setActiveMessageHandler(MESSAGE, (h, p) -> {
                count.incrementAndGet();
                long s = 0;
                while (p.hasRemaining()) {
                    s += p.get() & 0xFF;
                }
                sum.addAndGet(s);
            });
            w.setActiveMessageHandler(SLOW, (h, p) -> java.util.concurrent.locks.LockSupport.parkNanos(1_000_000));
            w.setActiveMessageHandler(VERIFY, (h, p) -> {
                byte[] expected = new byte[h.remaining()];
                h.get(expected);
                String[] want = new String(expected, StandardCharsets.US_ASCII).split(" ");
                String have = digest(data, counters) + " " + count.get() + " " + sum.get();
                System.out.println(String.join(" ", want).equals(have) ? "VERIFY ok " + have
                        : "VERIFY mismatch: expected " + String.join(" ", want) + ", target has " + have);
                System.out.flush();
            });
            w.setActiveMessageHandler(REPORT, (h, p) -> {
                System.out.println("STATE " + data.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0) + " "
                        + counters.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0) + " " + count.get());
                System.out.flush();
            });
            System.out.println("ADDRESS " + hex.formatHex(w.address().toBytes()) + " "
                    + hex.formatHex(data.remoteKey().toBytes()) + " " + hex.formatHex(counters.remoteKey().toBytes()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the test closes stdin or kills this process
            }
        }
    }

    static String digest(MemoryRegion data, MemoryRegion counters) {
        return digest(data.buffer(), counters.buffer());
    }

    static String digest(ByteBuffer data, ByteBuffer counters) {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // a mandatory JDK algorithm
        }
        md.update(data.duplicate().clear());
        md.update(counters.duplicate().clear());
        return HexFormat.of().formatHex(md.digest());
    }
}
