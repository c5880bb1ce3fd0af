package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Access;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The binding between two JVMs: a random mix of puts and atomics from this process into a
 * {@link UctPeer}'s region, checked against a model by the peer's own view of its memory (a CRC)
 * and every fetched value against the model's; active messages counted by the peer; and what UCT
 * says when the peer process dies: tcp reports the endpoint failed, shared memory does not (the
 * transport must watch the process itself).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UctTwoProcessTest {
    private static final long SEED = Long.getLong("fenceline.seed", 20261202L);
    private static final HexFormat HEX = HexFormat.of();

    @BeforeEach
    void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** A forked peer and its pipes. */
    private record Peer(Process process, BufferedReader out, PrintStream in, byte[] address, byte[] key, long base)
            implements AutoCloseable {
        static Peer fork(String transport, String device) throws Exception {
            Path log = Files.createDirectories(Path.of("target", "two-process")).resolve("uct-peer-" + transport + ".log");
            Process p = ChildJvm.command(System.getProperty("java.class.path"), java.util.List.of("-Xmx128m"),
                    UctPeer.class, transport, device).redirectError(log.toFile()).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("READY ")) {
                // skip
            }
            if (line == null) {
                p.destroyForcibly();
                throw new AssertionError("the peer printed no READY; its log:\n" + Files.readString(log));
            }
            String[] f = line.split(" ");
            return new Peer(p, out, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8),
                    HEX.parseHex(f[1]), HEX.parseHex(f[2]), Long.parseLong(f[3]));
        }

        String ask(String command, String answer) throws Exception {
            in.println(command);
            String line;
            while ((line = out.readLine()) != null && !line.startsWith(answer + " ")) {
                // skip
            }
            assertTrue(line != null, "the peer answered " + command);
            return line.substring(answer.length() + 1);
        }

        @Override
        public void close() {
            dev.fenceline.testkit.ProcessFaults.kill(process);
        }
    }

    private static long crc(byte[] model, int n) {
        CRC32 c = new CRC32();
        c.update(model, 0, n);
        return c.getValue();
    }

    /**
     * 10^5 puts (short and copied, 1 B to 4 KiB) and 64-bit atomics (posted add, fetch-add,
     * compare-and-swap) at random places of the peer's first 256 KiB; every fetched value is the
     * model's, and the peer's memory ends as the model's.
     */
    @ParameterizedTest
    @ValueSource(strings = {"posix", "sysv"})
    void aRandomMixAgreesWithTheModelInThePeersOwnMemory(String transport) throws Exception {
        System.out.println(transport + " two-process mix, seed " + SEED + " (-Dfenceline.seed to repeat)");
        SplittableRandom random = new SplittableRandom(SEED);
        int span = 256 * 1024;
        byte[] model = new byte[span];
        ByteBuffer m = ByteBuffer.wrap(model).order(ByteOrder.nativeOrder());
        try (Peer peer = Peer.fork(transport, "memory"); UctWorker w = UctWorker.create()) {
            UctIface a = w.open(UcxAssumptions.resource(transport, "memory"), Map.of());
            UctEndpoint ep = a.connect(peer.address());
            long rkey = a.unpack(peer.key()).value();
            ByteBuffer local = ByteBuffer.allocateDirect(8192);
            long src = BufferUtil.address(local);
            RecordedEvents ev = new RecordedEvents();
            long maxShort = Math.min(a.attributes().putMaxShort(), 256);
            long token = 0;
            int fetched = 0;
            for (int i = 0; i < 100_000; i++) {
                int what = random.nextInt(10);
                if (what < 6) {
                    int n = 1 + random.nextInt(what < 3 ? (int) maxShort : 4096);
                    int at = random.nextInt(span - n);
                    for (int k = 0; k < n; k++) {
                        byte v = (byte) random.nextInt();
                        local.put(k, v);
                        model[at + k] = v;
                    }
                    int s = n <= maxShort && what < 3 ? ep.putShort(src, n, peer.base() + at, rkey)
                            : ep.putBcopy(src, n, peer.base() + at, rkey);
                    assertEquals(UctStatus.OK, s, "put " + i + ": " + UctStatus.describe(s));
                } else {
                    int at = random.nextInt(span / 8) * 8;
                    long old = m.getLong(at);
                    long operand = random.nextLong();
                    int s;
                    if (what < 8) {
                        s = ep.atomicPost(UctEndpoint.ADD, 8, operand, peer.base() + at, rkey);
                        assertEquals(UctStatus.OK, s, UctStatus.describe(s));
                        m.putLong(at, old + operand);
                        continue;
                    }
                    boolean cas = what == 9;
                    long expected = random.nextBoolean() ? old : old + 1;
                    s = cas ? ep.compareAndSwap(8, expected, operand, peer.base() + at, rkey, ++token)
                            : ep.atomicFetch(UctEndpoint.ADD, 8, operand, peer.base() + at, rkey, ++token);
                    long got = s == UctStatus.OK ? ep.result() : ev.await(w, token)[1];
                    assertTrue(s == UctStatus.OK || s == UctStatus.IN_PROGRESS, UctStatus.describe(s));
                    assertEquals(old, got, "operation " + i + " fetched the model's old value");
                    fetched++;
                    m.putLong(at, cas ? (old == expected ? operand : old) : old + operand);
                }
            }
            int s = ep.flush(++token);
            ev.succeeded(w, s, token);
            assertEquals(String.valueOf(crc(model, span)), peer.ask("CRC " + span, "CRC"),
                    "the peer's memory is the model's");
            assertTrue(fetched > 10_000, "fetching atomics checked: " + fetched);
        }
    }

    /** Zero-copy puts from registered memory into the peer's registered region, and read back by get. */
    @Test
    void crossMemoryAttachWritesIntoAnotherProcess() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED);
        int span = 256 * 1024;
        byte[] model = new byte[span];
        try (Peer peer = Peer.fork("cma", "memory"); UctWorker w = UctWorker.create()) {
            UctIface a = w.open(UcxAssumptions.resource("cma", "memory"), Map.of());
            UctEndpoint ep = a.connect(peer.address());
            long rkey = a.unpack(peer.key()).value();
            ByteBuffer local = ByteBuffer.allocateDirect(64 * 1024);
            UctMemory reg = a.register(BufferUtil.address(local), local.capacity(), EnumSet.allOf(Access.class));
            RecordedEvents ev = new RecordedEvents();
            long token = 0;
            for (int i = 0; i < 2000; i++) {
                int n = 1 + random.nextInt(64 * 1024);
                int at = random.nextInt(span - n);
                for (int k = 0; k < n; k++) {
                    byte v = (byte) random.nextInt();
                    local.put(k, v);
                    model[at + k] = v;
                }
                int s = ep.putZcopy(reg.address(), n, reg.memoryHandle(), peer.base() + at, rkey, ++token);
                ev.succeeded(w, s, token);
            }
            assertEquals(String.valueOf(crc(model, span)), peer.ask("CRC " + span, "CRC"));
            int s = ep.getZcopy(reg.address(), 4096, reg.memoryHandle(), peer.base(), rkey, ++token);
            ev.succeeded(w, s, token);
            for (int k = 0; k < 4096; k++) {
                assertEquals(model[k], local.get(k), "byte " + k + " read back");
            }
        }
    }

    /**
     * Active messages over tcp reach the peer process, all of them; when the peer is killed, UCT's
     * tcp reports the endpoint failed (it has peer-failure handling), within seconds.
     */
    @Test
    void tcpCarriesMessagesToAnotherProcessAndReportsItsDeath() throws Exception {
        try (Peer peer = Peer.fork("tcp", "lo"); UctWorker w = UctWorker.create()) {
            UctIface a = w.open(UcxAssumptions.resource("tcp", "lo"), Map.of());
            UctEndpoint ep = a.connect(peer.address());
            ByteBuffer local = ByteBuffer.allocateDirect(256);
            long sum = 0;
            for (int k = 0; k < 256; k++) {
                local.put(k, (byte) k);
                sum += k;
            }
            RecordedEvents ev = new RecordedEvents();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            for (int i = 0; i < 1000; i++) {
                int s;
                while ((s = ep.activeMessageCopy(1, BufferUtil.address(local), 256)) == UctStatus.NO_RESOURCE) {
                    assertTrue(System.nanoTime() < deadline, "no room for message " + i);
                    w.progress();
                    w.drain(ev);
                }
                assertEquals(UctStatus.OK, s, UctStatus.describe(s));
            }
            long token = 1;
            int s = ep.flush(token);
            ev.succeeded(w, s, token);
            String counted = "";
            while (System.nanoTime() < deadline && !counted.equals("1000 " + sum * 1000)) {
                counted = peer.ask("MESSAGES", "MESSAGES");
            }
            assertEquals("1000 " + sum * 1000, counted, "every message arrived, once");
            assertTrue(a.attributes().has(UctIfaceAttributes.PEER_FAILURE), "UCT's tcp handles peer failure");
            peer.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (ev.failures.isEmpty() && System.nanoTime() < deadline) {
                ep.activeMessageCopy(1, BufferUtil.address(local), 8); // traffic makes the reset show
                w.progress();
                w.drain(ev);
            }
            assertTrue(!ev.failures.isEmpty(), "UCT reported the dead peer's endpoint failed");
            System.out.println("tcp: the dead peer's endpoint failed with " + ev.failures.get(0) + " ("
                    + UctStatus.describe(ev.failures.get(0)) + ")");
        }
    }
}
