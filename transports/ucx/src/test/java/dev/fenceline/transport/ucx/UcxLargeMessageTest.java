package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.FencelineException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Active messages larger than one UCT message (about 8 KiB on shared memory, and on tcp with the
 * 8 KiB segments set here rather than the default 256 KiB) go in parts and arrive whole, in order
 * among the lane's other operations, up to max-fragment; beyond the sender's bound the call fails
 * at once, and beyond the target's (a peer configured smaller) the target refuses the message with
 * its bound named, and both endpoints go on. The seed is printed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UcxLargeMessageTest {
    private static final int CHECK = 3;

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private static String config(String tls, String maxFragment) {
        return "fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [" + tls + "]\n"
                + (tls.equals("tcp") ? "fenceline.transport.ucx.devices = [lo]\nfenceline.transport.ucx.tcp-unchecked-writes = accept\n"
                        + "fenceline.transport.ucx.uct.tcp { TX_SEG_SIZE = 8K, RX_SEG_SIZE = 8K }\n" : "")
                + "fenceline.transport.ucx.max-fragment = " + maxFragment + "\n";
    }

    /** A message numbered {@code n}: an 8-byte header with n, then {@code size} bytes, byte i = n + i. */
    private static ByteBuffer payload(long n, int size) {
        ByteBuffer p = ByteBuffer.allocate(size);
        for (int i = 0; i < size; i++) {
            p.put(i, (byte) (n + i));
        }
        return p;
    }

    private static ByteBuffer header(long n) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, n);
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void messagesOfEverySizeUpToMaxFragmentArriveWholeAndInOrder(String tls) throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261202L);
        System.out.println("UcxLargeMessageTest " + tls + " seed " + seed);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(config(tls, "1MiB")))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            Endpoint ep = await(a.connect(b.address()));
            MemoryRegion region = b.allocate(4096);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            AtomicLong next = new AtomicLong();
            AtomicLong sizes = new AtomicLong();
            AtomicReference<String> wrong = new AtomicReference<>();
            b.setActiveMessageHandler(CHECK, (h, p) -> {
                long n = h.order(ByteOrder.nativeOrder()).getLong(h.position());
                if (n != next.get()) {
                    wrong.compareAndSet(null, "expected message " + n + ", got " + next.get());
                }
                next.set(n + 1);
                int size = p.remaining();
                for (int i = 0; i < size; i++) {
                    if (p.get(p.position() + i) != (byte) (n + i)) {
                        wrong.compareAndSet(null, "message " + n + " of " + size + " bytes: byte " + i);
                        break;
                    }
                }
                sizes.addAndGet(size);
            });
            // Small ones, which go as short active messages where they fit the iface's am_short limit
            // (header included), around the size of one UCT message, the bound itself; then random
            // sizes, half of them small, so short and copied messages alternate on the channel.
            int[] edges = {0, 1, 7, 8, 9, 40, 64, 100, 128, 200, 256, 8000, 8096, 8097, 8176, 8177, 16_272, 16_273,
                100_000, (1 << 20) - 8};
            SplittableRandom rnd = new SplittableRandom(seed);
            long n = 0;
            long bytes = 0;
            CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
            for (int i = 0; i < edges.length + 200; i++) {
                int size = i < edges.length ? edges[i] : rnd.nextBoolean() ? rnd.nextInt(300)
                        : rnd.nextInt((1 << 20) - 8 + 1);
                ByteBuffer p = payload(n, size);
                if (rnd.nextBoolean()) {
                    last = ep.sendActiveMessage(CHECK, header(n), p).toCompletableFuture();
                } else {
                    ep.sendActiveMessageImplicit(CHECK, header(n), p);
                }
                n++;
                bytes += size;
                if (rnd.nextInt(4) == 0) { // a put between messages keeps its place
                    ep.putImplicit(ByteBuffer.allocate(8).putLong(0, n), region.address(), key);
                }
                if (rnd.nextInt(16) == 0) {
                    await(ep.flush());
                    assertEquals(n, next.get(), "a flush completed before message " + (n - 1) + " ran (seed " + seed
                            + ")");
                }
            }
            await(last);
            await(ep.flush());
            assertEquals(null, wrong.get(), "seed " + seed);
            assertEquals(n, next.get());
            assertEquals(bytes, sizes.get());

            // One byte past the bound: refused at the call, and the endpoint goes on.
            long after = n;
            Throwable t = assertThrows(ExecutionException.class, () -> await(ep.sendActiveMessage(CHECK, header(after),
                    payload(after, (1 << 20) - 7)))).getCause();
            assertInstanceOf(FencelineException.class, t);
            assertTrue(t.getMessage().contains("max-fragment"), t.getMessage());
            await(ep.sendActiveMessage(CHECK, header(after), payload(after, 20_000)));
            assertEquals(null, wrong.get());
        }
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aTargetWithASmallerBoundRefusesALargerMessageAndBothGoOn(String tls) throws Exception {
        try (Fenceline big = Fenceline.create(ConfigFactory.parseString(config(tls, "4MiB")));
                Fenceline small = Fenceline.create(ConfigFactory.parseString(config(tls, "1MiB")))) {
            Worker a = await(big.newWorker("a"));
            Worker b = await(small.newWorker("b"));
            Endpoint ep = await(a.connect(b.address()));
            AtomicLong ran = new AtomicLong();
            b.setActiveMessageHandler(CHECK, (h, p) -> ran.incrementAndGet());
            Throwable t = assertThrows(ExecutionException.class, () -> await(ep.sendActiveMessage(CHECK, header(0),
                    payload(0, 2 << 20)))).getCause();
            assertInstanceOf(FencelineException.class, t);
            assertTrue(t.getMessage().contains("exceeds this worker's limit of 1048576"), t.getMessage());
            assertEquals(0, ran.get(), "the handler never ran for it");
            await(ep.sendActiveMessage(CHECK, header(1), payload(1, 500_000)));
            assertEquals(1, ran.get());
        }
    }
}
