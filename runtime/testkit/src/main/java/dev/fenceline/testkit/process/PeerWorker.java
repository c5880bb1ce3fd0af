package dev.fenceline.testkit.process;

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
 * The target process of tests across processes ({@link PeerWorkerProcess} forks it): a worker with
 * a data region of {@link #DATA} bytes and a counter region of {@link #COUNTERS} words, on the
 * configuration its first argument gives. It prints {@code ADDRESS <worker> <data key> <counter key>}
 * (hex), counts active messages ({@link #MESSAGE}), and on {@link #VERIFY} (header: the expected
 * SHA-256 of both regions, the expected message count and byte sum) checks its own memory and
 * prints {@code VERIFY ok ...} or what differs. It serves until its standard input closes.
 */
public final class PeerWorker {
    /** Bytes of the data region. */
    public static final int DATA = 1 << 20;
    /** Words of the counter region. */
    public static final int COUNTERS = 64;
    /** Counted: how many came, and the sum of their payloads' bytes. */
    public static final int MESSAGE = 1;
    /** Checks the regions and the counts against the header's expectation, and prints the verdict. */
    public static final int VERIFY = 2;
    /** Takes a millisecond each: messages queue up unanswered behind it. */
    public static final int SLOW = 3;
    /** Prints {@code STATE <first data word> <first counter> <messages>}. */
    public static final int REPORT = 4;

    private PeerWorker() {
    }

    /**
     * @param args the configuration (HOCON, over the defaults); then {@code registered}: the regions
     *     are registered memory rather than allocated by the transports
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        boolean registered = args.length > 1 && args[1].equals("registered");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(args[0]).withFallback(ConfigFactory.load()))) {
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
                String have = digest(data.buffer(), counters.buffer()) + " " + count.get() + " " + sum.get();
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

    /**
     * @param data the data region's bytes (whole buffer)
     * @param counters the counter region's bytes (whole buffer)
     * @return the SHA-256 of both, hex
     */
    public static String digest(ByteBuffer data, ByteBuffer counters) {
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
