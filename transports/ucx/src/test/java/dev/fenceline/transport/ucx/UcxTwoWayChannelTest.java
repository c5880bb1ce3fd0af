package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two workers that connect to each other share one UCT endpoint on each side between the same two
 * ifaces (wireup's REVERSE): the second to connect sends its lanes on its end of the channel the
 * first dialed, and the first answers them on its own. Over tcp one connection then carries both
 * ways, so each message carries the acknowledgement of the last one the other way. What a third
 * worker forging a REVERSE cannot do: take a channel that is not the target's own to it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxTwoWayChannelTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static Fenceline over(String tls) {
        return Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [" + tls + "]\n"
                + (tls.equals("tcp") ? "fenceline.transport.ucx.devices = [lo]\nfenceline.transport.ucx.tcp-unchecked-writes = accept\n" : "")
                + "fenceline.endpoint.keepalive.timeout = 60s"));
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** @return the query's answer, read on the lane's worker's agent thread, in a handler of {@code w}'s */
    private static <T> T onAgent(Worker w, Endpoint toW, UcxLane lane, Function<UcxWiring, T> query) throws Exception {
        UcxWiring wiring = WireupForgery.wiring(lane);
        AtomicReference<T> answer = new AtomicReference<>();
        w.setActiveMessageHandler(2, (h, p) -> answer.set(query.apply(wiring)));
        await(toW.sendActiveMessage(2, null, null));
        assertTrue(answer.get() != null, "the query ran on the agent");
        return answer.get();
    }

    /** What a lane's worker knows of the lane's channel: its id, who dialed it, both ways, endpoints made for peers. */
    private record Seen(long id, boolean origin, boolean bothWays, long madeForPeers) {
    }

    private static Seen seen(UcxLane lane, UcxWiring w) {
        return new Seen(lane.channel.id, lane.channel.origin, lane.channel.bothWays, WireupForgery.channelsMade(w));
    }

    /** a connected to b, then b to a, a message each way answered; their UCT lanes. */
    private record Pair(Endpoint ab, Endpoint ba, UcxLane aLane, UcxLane bLane) {
        static Pair connect(Worker a, Worker b) throws Exception {
            Endpoint ab = await(a.connect(b.address()));
            await(ab.sendActiveMessage(1, null, null));
            Endpoint ba = await(b.connect(a.address()));
            await(ba.sendActiveMessage(1, null, null));
            UcxLane aLane = UcxLane.byId(ab.lanes().get(0).connectionId());
            UcxLane bLane = UcxLane.byId(ba.lanes().get(0).connectionId());
            assertTrue(aLane != null && bLane != null, "both lanes are UCT lanes, live");
            return new Pair(ab, ba, aLane, bLane);
        }
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void theSecondToConnectSendsOnTheChannelTheFirstDialed(String tls) throws Exception {
        try (Fenceline f = over(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            AtomicInteger atA = new AtomicInteger();
            AtomicInteger atB = new AtomicInteger();
            a.setActiveMessageHandler(1, (h, p) -> atA.incrementAndGet());
            b.setActiveMessageHandler(1, (h, p) -> atB.incrementAndGet());
            Pair both = Pair.connect(a, b);
            Endpoint ab = both.ab();
            Endpoint ba = both.ba();
            UcxLane aLane = both.aLane();
            UcxLane bLane = both.bLane();

            Seen fromA = onAgent(a, ba, aLane, w -> seen(aLane, w));
            Seen fromB = onAgent(b, ab, bLane, w -> seen(bLane, w));
            assertEquals(fromA.id(), fromB.id(), "b's lane goes on the channel a dialed");
            assertTrue(fromA.origin() && !fromB.origin(), "a dialed it: " + fromA + ", " + fromB);
            assertTrue(fromA.bothWays() && fromB.bothWays(), "it carries both ways: " + fromA + ", " + fromB);
            assertEquals(1, fromB.madeForPeers(), "b made one endpoint, for a's connect");
            assertEquals(0, fromA.madeForPeers(), "a made none for b's: b's lane answers go on a's own");

            int before = atA.get();
            int beforeB = atB.get();
            List<CompletionStage<Void>> sent = new ArrayList<>();
            for (int i = 0; i < 500; i++) { // interleaved: each way's requests and answers share the endpoints
                sent.add(ab.sendActiveMessage(1, null, null));
                sent.add(ba.sendActiveMessage(1, null, null));
            }
            for (CompletionStage<Void> s : sent) {
                await(s);
            }
            await(ab.flush());
            await(ba.flush());
            assertEquals(500, atB.get() - beforeB, "b ran each of a's messages once");
            assertEquals(500, atA.get() - before, "a ran each of b's messages once");
        }
    }

    /** Whichever closes, the other's lanes on the shared channel fail at once (LEAVING), not by keepalive (60 s). */
    @ParameterizedTest(name = "over UCT {0}, {1} closes")
    @CsvSource({"posix, a", "posix, b", "tcp, a", "tcp, b"})
    void eitherClosingFailsTheOthersLanesAtOnce(String tls, String closing) throws Exception {
        try (Fenceline f = over(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            a.setActiveMessageHandler(1, (h, p) -> { });
            b.setActiveMessageHandler(1, (h, p) -> { });
            Pair both = Pair.connect(a, b);
            Worker closed = closing.equals("a") ? a : b;
            Endpoint left = closing.equals("a") ? both.ba() : both.ab();
            await(closed.close());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (left.lanes().stream().anyMatch(LaneInfo::live)) {
                assertTrue(System.nanoTime() < deadline, "lanes still live 10 s after the peer closed: " + left.lanes());
                Thread.sleep(10);
            }
            Throwable t = assertThrows(ExecutionException.class, () -> await(left.sendActiveMessage(1, null, null)))
                    .getCause();
            assertInstanceOf(EndpointFailedException.class, t, String.valueOf(t));
        }
    }

    /**
     * A two-way channel that fails at one worker fails both its roles there: the worker's lanes on
     * it, and the peer's connections it answered, whichever of the two dialed it. A third worker's
     * own channels carry the queries afterwards.
     */
    @ParameterizedTest(name = "over UCT {0}, {1}'s end breaks")
    @CsvSource({"posix, a", "posix, b", "tcp, a", "tcp, b"})
    void aTwoWayChannelThatFailsFailsBothItsRoles(String tls, String breaking) throws Exception {
        try (Fenceline f = over(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            Worker c = await(f.newWorker("c"));
            for (Worker w : List.of(a, b, c)) {
                w.setActiveMessageHandler(1, (h, p) -> { });
            }
            Endpoint ca = await(c.connect(a.address()));
            Endpoint cb = await(c.connect(b.address()));
            Pair both = Pair.connect(a, b);
            boolean atA = breaking.equals("a");
            Worker broken = atA ? a : b;
            UcxLane its = atA ? both.aLane() : both.bLane();
            long peersConn = (atA ? both.bLane() : both.aLane()).conn;
            Endpoint query = atA ? ca : cb;
            boolean answeredBefore = onAgent(broken, query, its, w -> open(w, peersConn));
            assertTrue(answeredBefore, "the peer's lane is open at " + breaking + " before the break");

            its.breakChannel(new EndpointFailedException("test: the two-way channel broke"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!its.channelFailed) {
                assertTrue(System.nanoTime() < deadline, "the lane on the broken channel did not fail");
                Thread.sleep(5);
            }
            boolean answered = onAgent(broken, query, its, w -> open(w, peersConn));
            assertFalse(answered, "the broken end answers none of the peer's lane's requests any more");
        }
    }

    /**
     * A REVERSE names the target's own channel to the sender: one the target does not have, one it
     * dialed to another worker, and the sender's own (the target's end of it) are refused, and the
     * target goes on serving both.
     */
    @Test
    void aReverseNamingAChannelNotTheTargetsOwnToTheSenderIsRefused() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker d = await(f.newWorker("d"));
            d.setActiveMessageHandler(1, (h, p) -> { });
            Endpoint ad = await(g.a().connect(d.address()));
            await(ad.sendActiveMessage(1, null, null));
            UcxLane toD = UcxLane.byId(ad.lanes().get(0).connectionId());
            assertTrue(toD != null, "a's UCT lane to d is live");
            long toDId = g.atA(w -> toD.channel.id);
            boolean dialed = g.atA(w -> toD.channel.origin);
            assertTrue(dialed, "a dialed its channel to d");
            long cDialed = g.toA().id; // c's channel to a: a's end is its reply channel, not its own
            long[] named = {0x0BAD_5EEDL, toDId, cDialed};
            for (int i = 0; i < named.length; i++) {
                long conn = 0x7000L + i;
                g.send(new UcxWireup.Connect(300 + i, g.c().address().workerId(), g.c().address().transportAddress("ucx"),
                        List.of(new UcxWireup.Channel(named[i], g.toA().ifaceIndex, g.toA().peerIface,
                                UcxWireup.Mode.REVERSE, new byte[0])), List.of(new UcxWireup.Lane(conn, 0))));
                boolean opened = g.atA(w -> open(w, conn));
                assertFalse(opened, "a opened no lane for a REVERSE naming "
                        + Long.toHexString(named[i]));
            }
            boolean taken = g.atA(w -> toD.channel.bothWays);
            assertFalse(taken, "a's channel to d carries nothing of c's");
            await(g.ca().sendActiveMessage(1, null, null));
            await(g.ac().sendActiveMessage(1, null, null));
            await(ad.sendActiveMessage(1, null, null));
        }
    }

    /**
     * A third worker (c) makes a channel at a in d's name (a CONNECT naming d, which c sent): a's
     * connect to d names it REVERSE, d refuses it as not its own, and a dials again at once on a
     * channel of its own. The connect succeeds, and the planted channel carries none of a's lanes.
     */
    @Test
    void aChannelMadeInThePeersNameCostsARefusalNotTheConnect() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker d = await(f.newWorker("d"));
            d.setActiveMessageHandler(1, (h, p) -> { });
            java.util.UUID dId = d.address().workerId();
            long planted = 0x9_1A47EDL;
            g.send(new UcxWireup.Connect(400, dId, d.address().transportAddress("ucx"),
                    List.of(new UcxWireup.Channel(planted, g.toA().ifaceIndex, g.toA().peerIface, UcxWireup.Mode.IFACE,
                            new byte[0])), List.of(new UcxWireup.Lane(0x8000L, 0))));
            boolean made = g.atA(w -> plantedAt(w, dId, planted) != null);
            assertTrue(made, "a made the channel, as d's");

            long start = System.nanoTime();
            Endpoint ad = await(g.a().connect(d.address()));
            await(ad.sendActiveMessage(1, null, null));
            long ms = (System.nanoTime() - start) / 1_000_000;
            UcxLane lane = UcxLane.byId(ad.lanes().get(0).connectionId());
            assertTrue(lane != null, "a's UCT lane to d is live");
            boolean own = g.atA(w -> lane.channel.origin && lane.channel.id != planted);
            assertTrue(own, "a's lane goes on a channel a dialed");
            boolean never = g.atA(w -> plantedAt(w, dId, planted).noReverse
                    && !lane.channel.peer.originChannels.contains(plantedAt(w, dId, planted)));
            assertTrue(never, "the planted channel carries none of a's lanes from now on");
            assertTrue(ms < 4_000, "the connect took " + ms + " ms: dialed again at the refusal, not at a timeout");
        }
    }

    /** @return a's reply channel of that id for the worker, or null */
    private static UcxChannel plantedAt(UcxWiring w, java.util.UUID worker, long id) {
        UcxPeer p = w.peerOf(worker);
        return p == null ? null : p.replyChannels.get(id);
    }

    private static boolean open(UcxWiring w, long conn) {
        try {
            java.lang.reflect.Field f = UcxWiring.class.getDeclaredField("target");
            f.setAccessible(true);
            return ((UcxTarget) f.get(w)).isOpen(conn);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
