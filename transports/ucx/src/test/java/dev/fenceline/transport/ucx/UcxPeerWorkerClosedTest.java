package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.Worker;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker that closes tells its peers (wireup's LEAVING): their lanes to it fail at once, naming it,
 * rather than when keepalive gives up (here 60 s, so only the message can do it in time). Over UCT
 * shared memory, where nothing else would tell (the peer's process lives on), and over tcp. And what
 * a third worker forging wireup messages cannot do: part two others, grow a worker's peers, end a
 * connect in flight.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxPeerWorkerClosedTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void thePeersLanesFailAtOnceNamingTheClosedWorker(String tls) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [" + tls + "]\n"
                + (tls.equals("tcp") ? "fenceline.transport.ucx.devices = [lo]\nfenceline.transport.ucx.tcp-unchecked-writes = accept\n" : "")
                + "fenceline.endpoint.keepalive.timeout = 60s"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            b.setActiveMessageHandler(1, (h, p) -> { });
            Endpoint ep = await(a.connect(b.address()));
            await(ep.sendActiveMessage(1, null, null));
            await(b.close());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ep.lanes().stream().anyMatch(LaneInfo::live)) {
                assertTrue(System.nanoTime() < deadline, "lanes still live 10 s after the peer closed: " + ep.lanes());
                Thread.sleep(10);
            }
            Throwable t = assertThrows(ExecutionException.class, () -> await(ep.sendActiveMessage(1, null, null)))
                    .getCause();
            assertInstanceOf(EndpointFailedException.class, t, t.toString());
            assertTrue(String.valueOf(t.getMessage()).contains("peer worker " + b.address().workerId() + " closed"),
                    t.getMessage());
        }
    }

    /**
     * A worker that only dialed its peer names only channels it drew when it closes, among them
     * one that carries no messages (cma's): the peer ends its side of each, then forgets the
     * worker, nothing of it being left.
     */
    @Test
    void aWorkerThatOnlyDialedIsForgottenByItsPeerWhenItCloses() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [posix, cma]\n"
                + "fenceline.endpoint.keepalive.timeout = 60s"))) {
            WireupForgery g = WireupForgery.open(f);
            Worker d = await(f.newWorker("d"));
            d.setActiveMessageHandler(1, (h, p) -> { });
            Endpoint dc = await(d.connect(g.c().address()));
            await(dc.sendActiveMessage(1, null, null));
            assertTrue(dc.lanes().size() == 2 && dc.lanes().stream().anyMatch(l -> {
                UcxLane u = UcxLane.byId(l.connectionId());
                return u != null && !u.channel.iface.attributes().has(UctIfaceAttributes.AM_BCOPY);
            }), "d's lanes to c include one on a channel without messages: " + dc.lanes());
            UcxWiring atC = WireupForgery.wiring(g.lane());
            java.util.concurrent.atomic.AtomicInteger peersAtC = new java.util.concurrent.atomic.AtomicInteger(-1);
            g.c().setActiveMessageHandler(2, (h, p) -> peersAtC.set(atC.allPeers().size())); // c's agent thread
            await(g.ac().sendActiveMessage(2, null, null));
            int before = peersAtC.get();
            assertTrue(before == 2, "c knows a and d: " + before);
            await(d.close());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            do {
                assertTrue(System.nanoTime() < deadline, "c still knows d: " + peersAtC.get() + " peers");
                await(g.ac().sendActiveMessage(2, null, null));
            } while (peersAtC.get() != 1);
        }
    }

    /** Returns once a's agent has a connect in flight, read on a's agent thread (in a handler). */
    private static void awaitDialing(WireupForgery g) throws Exception {
        UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
        assertTrue(aLane != null, "a's UCT lane to c is live");
        UcxWiring atA = WireupForgery.wiring(aLane);
        java.lang.reflect.Field dials = UcxWiring.class.getDeclaredField("dials");
        dials.setAccessible(true);
        java.util.concurrent.atomic.AtomicInteger dialing = new java.util.concurrent.atomic.AtomicInteger(-1);
        g.a().setActiveMessageHandler(2, (h, p) -> {
            try {
                dialing.set(((UcxDials) dials.get(atA)).count());
            } catch (IllegalAccessException e) {
                g.failed().set(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        do {
            assertTrue(System.nanoTime() < deadline, "a's connect never reached its agent");
            await(g.ca().sendActiveMessage(2, null, null));
            assertTrue(g.failed().get() == null, String.valueOf(g.failed().get()));
        } while (dialing.get() < 1);
    }

    /**
     * A third worker cannot part two others: its LEAVING naming another worker, over its own channel
     * or one it made up, is dropped (a check that took the channel's peer for the leaver would part the
     * sender itself, and this test sees that), and so is one naming a channel it made in another
     * worker's name; only a LEAVING naming the sender and a channel the receiver drew parts them.
     */
    @Test
    void aLeavingNamingAnotherWorkerOrAChannelNotOfTheTwoIsDropped() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker a = g.a();
            Worker c = g.c();
            Worker b = await(f.newWorker("b"));
            b.setActiveMessageHandler(1, (h, p) -> { });
            Endpoint ab = await(a.connect(b.address()));
            await(ab.sendActiveMessage(1, null, null));
            UcxChannel toA = g.toA();
            UUID bId = b.address().workerId();
            // c in b's name: a CONNECT with b's id and address making a channel whose id c drew
            // (a's end of it reaches b's iface), then a LEAVING in b's name naming that channel.
            long drawnByC = toA.id ^ 0x1234_5678_9ABCL;
            UcxWireup.Message impersonation = new UcxWireup.Connect(77, bId, b.address().transportAddress("ucx"),
                    List.of(new UcxWireup.Channel(drawnByC, 0, toA.peerIface, UcxWireup.Mode.IFACE, new byte[0])),
                    List.of());
            g.send(new UcxWireup.Leaving(bId, toA.id), new UcxWireup.Leaving(bId, toA.id ^ 0x5DEECE66DL),
                    new UcxWireup.Leaving(c.address().workerId(), toA.id ^ 0x5DEECE66DL), impersonation,
                    new UcxWireup.Leaving(bId, drawnByC));
            // Parting c would have failed a's lanes to it on a's agent thread before the send returned:
            // the message below would fail.
            await(ab.sendActiveMessage(1, null, null));
            await(g.ac().sendActiveMessage(1, null, null));
            assertTrue(ab.lanes().stream().allMatch(LaneInfo::live), "a and b were not parted: " + ab.lanes());
            assertTrue(g.ac().lanes().stream().allMatch(LaneInfo::live), "nor a from c: " + g.ac().lanes());

            // The sender naming itself and a channel a drew (a's channel to c, whose id c was told):
            // that one parts them (the path works). The message that made c send it is parted from
            // with it: its outcome is unknown to a.
            UcxLane aToC = UcxLane.byId(g.ac().lanes().get(0).connectionId());
            assertTrue(aToC != null, "a's UCT lane to c is live");
            g.forged().set(new UcxWireup.Message[] {new UcxWireup.Leaving(c.address().workerId(), aToC.channel.id)});
            Throwable outcome = g.ac().sendActiveMessage(9, null, null).toCompletableFuture()
                    .handle((v, e) -> e instanceof java.util.concurrent.CompletionException ? e.getCause() : e)
                    .get(20, TimeUnit.SECONDS);
            assertTrue(outcome == null || outcome instanceof dev.fenceline.OutcomeUnknownException,
                    String.valueOf(outcome));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (g.ac().lanes().stream().anyMatch(LaneInfo::live)) {
                assertTrue(System.nanoTime() < deadline, "a did not part from c: " + g.ac().lanes());
                Thread.sleep(10);
            }
            await(ab.sendActiveMessage(1, null, null));
            assertTrue(ab.lanes().stream().allMatch(LaneInfo::live), "a and b still: " + ab.lanes());
        }
    }

    /**
     * CONNECTs in the names of workers nobody knew, each refused (an iface the receiver does not
     * have), leave no peer behind: a stream of them would otherwise grow the receiver's peers for
     * as long as it runs.
     */
    @Test
    void aRefusedConnectFromAWorkerNotKnownBeforeLeavesNoPeer() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
            assertTrue(aLane != null, "a's UCT lane to c is live");
            UcxWiring atA = WireupForgery.wiring(aLane);
            java.util.concurrent.atomic.AtomicInteger peersAtA = new java.util.concurrent.atomic.AtomicInteger(-1);
            g.a().setActiveMessageHandler(2, (h, p) -> peersAtA.set(atA.allPeers().size())); // a's agent thread
            await(g.ca().sendActiveMessage(2, null, null));
            int before = peersAtA.get();
            assertTrue(before >= 1, "a knows c: " + before);

            UcxWireup.Message[] strangers = new UcxWireup.Message[100];
            java.util.Random random = new java.util.Random(20261203);
            System.out.println("aRefusedConnectFromAWorkerNotKnownBeforeLeavesNoPeer: seed 20261203");
            for (int i = 0; i < strangers.length; i++) {
                strangers[i] = new UcxWireup.Connect(random.nextLong(), new UUID(random.nextLong(), random.nextLong()),
                        g.c().address().transportAddress("ucx"), List.of(new UcxWireup.Channel(random.nextLong(), 0,
                                UcxAddress.MAX_IFACES - 1, UcxWireup.Mode.IFACE, new byte[0])), List.of());
            }
            g.send(strangers);
            await(g.ca().sendActiveMessage(2, null, null));
            assertTrue(peersAtA.get() == before, "peers at a: " + peersAtA.get() + ", before " + before);
        }
    }

    /**
     * A CONNECT is the sender's word for who it is and where it listens. c claims b's id with its
     * own address before a ever dials b; a then connects to b's address as given: its operations
     * must reach b, not c.
     */
    @Test
    void aConnectClaimingAnotherWorkersIdDoesNotRedirectADialToThatWorker() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker b = await(f.newWorker("b"));
            dev.fenceline.MemoryRegion r = b.allocate(4096);
            UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
            assertTrue(aLane != null, "a's UCT lane to c is live");
            UcxWiring atA = WireupForgery.wiring(aLane);
            java.util.concurrent.atomic.AtomicReference<UcxPeer> claimed = new java.util.concurrent.atomic.AtomicReference<>();
            g.a().setActiveMessageHandler(2, (h, p) -> claimed.set(atA.peerOf(b.address().workerId()))); // a's agent
            g.send(new UcxWireup.Connect(79, b.address().workerId(), g.c().address().transportAddress("ucx"),
                    List.of(new UcxWireup.Channel(0x5EED, 0, 0, UcxWireup.Mode.IFACE, new byte[0])),
                    List.of(new UcxWireup.Lane(0x5EED_0001L, 0))));
            await(g.ca().sendActiveMessage(2, null, null));
            assertTrue(claimed.get() != null, "a took the claim: it knows a worker of b's id, at c's address");
            Endpoint ab = await(g.a().connect(b.address()));
            dev.fenceline.RemoteKey k = g.a().unpackRemoteKey(r.remoteKey().toBytes());
            java.nio.ByteBuffer v = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder());
            v.putLong(0, 42);
            await(ab.put(v, r.address(), k));
            assertTrue(r.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0) == 42, "the put reached b");
            await(g.ca().sendActiveMessage(1, null, null)); // c's own lane to a still serves
        }
    }

    /**
     * A CONNECT claiming b's id with b's address less its key table, before a knows b: a knows b
     * without its table (a later CONNECT brings none), until a dials b at its whole address, which
     * replaces the peer and maps the table.
     */
    @Test
    void aClaimWithoutTheTableKeepsNoneOnceThatWorkerIsDialed() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker b = await(f.newWorker("b"));
            UUID bId = b.address().workerId();
            UcxAddress whole = UcxAddress.decode(b.address().transportAddress("ucx"));
            assertTrue(whole.table() != null, "b publishes its key table: " + whole);
            byte[] less = new UcxAddress(whole.host(), whole.pid(), whole.start(), whole.ifaces(), null).encode();
            for (int i = 0; i < 2; i++) { // the second with the table: it brings none to a known peer
                g.send(new UcxWireup.Connect(81 + i, bId, i == 0 ? less : whole.encode(),
                        List.of(new UcxWireup.Channel(0x7AB1E + i, 0, 0, UcxWireup.Mode.IFACE, new byte[0])),
                        List.of(new UcxWireup.Lane(0x7AB1E_0001L + i, 0))));
            }
            boolean without = g.atA(w -> w.peerOf(bId) != null && w.peerOf(bId).table == null);
            assertTrue(without, "a knows b, without a table");
            Endpoint ab = await(g.a().connect(b.address()));
            boolean mapped = g.atA(w -> w.peerOf(bId) != null && w.peerOf(bId).table != null);
            assertTrue(mapped, "dialed at its whole address, b's table is mapped");
            dev.fenceline.MemoryRegion r = b.allocate(4096);
            java.nio.ByteBuffer v = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder());
            v.putLong(0, 43);
            await(ab.put(v, r.address(), g.a().unpackRemoteKey(r.remoteKey().toBytes())));
            assertTrue(r.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0) == 43, "the put reached b");
        }
    }

    /** A CONNECT that asks for no lane would only make the target hold channels: it is dropped. */
    @Test
    void aConnectForNoLaneLeavesNothingBehind() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
            assertTrue(aLane != null, "a's UCT lane to c is live");
            UcxWiring atA = WireupForgery.wiring(aLane);
            UUID stranger = UUID.randomUUID();
            java.util.concurrent.atomic.AtomicReference<Object> known = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicInteger peersAtA = new java.util.concurrent.atomic.AtomicInteger(-1);
            g.a().setActiveMessageHandler(2, (h, p) -> { // a's agent thread
                known.set(String.valueOf(atA.peerOf(stranger)));
                peersAtA.set(atA.allPeers().size());
            });
            await(g.ca().sendActiveMessage(2, null, null));
            int before = peersAtA.get();
            g.send(new UcxWireup.Connect(80, stranger, g.c().address().transportAddress("ucx"),
                    List.of(new UcxWireup.Channel(0x5EEE, 0, 0, UcxWireup.Mode.IFACE, new byte[0])), List.of()));
            await(g.ca().sendActiveMessage(2, null, null));
            assertTrue(known.get().equals("null"), "a knows the stranger: " + known.get());
            assertTrue(peersAtA.get() == before, "peers at a: " + peersAtA.get() + ", before " + before);
        }
    }

    /**
     * A CONNECT refused because one of its lanes names a taken connection id opens none of its
     * lanes: c asks a, over c's existing channel, for two lanes, a fresh id and then its own live
     * lane's id; a holds as many lanes of its peers after as before, and c's lane still serves.
     */
    @Test
    void aConnectRefusedForATakenIdOpensNoneOfItsLanes() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
            assertTrue(aLane != null, "a's UCT lane to c is live");
            java.lang.reflect.Field targetField = UcxWiring.class.getDeclaredField("target");
            targetField.setAccessible(true);
            UcxTarget atA = (UcxTarget) targetField.get(WireupForgery.wiring(aLane));
            java.util.concurrent.atomic.AtomicInteger incomingAtA = new java.util.concurrent.atomic.AtomicInteger(-1);
            g.a().setActiveMessageHandler(2, (h, p) -> incomingAtA.set(atA.incoming())); // a's agent thread
            await(g.ca().sendActiveMessage(2, null, null));
            int before = incomingAtA.get();
            assertTrue(before >= 1, "a holds c's lane: " + before);

            UcxChannel toA = g.toA();
            long taken = g.lane().conn;
            long fresh = taken ^ 0x5A5A_0000_1111L;
            g.send(new UcxWireup.Connect(78, g.c().address().workerId(), g.c().address().transportAddress("ucx"),
                    List.of(new UcxWireup.Channel(toA.id, toA.ifaceIndex, toA.peerIface, UcxWireup.Mode.EXISTING,
                            new byte[0])),
                    List.of(new UcxWireup.Lane(fresh, 0), new UcxWireup.Lane(taken, 0))));
            await(g.ca().sendActiveMessage(2, null, null));
            assertTrue(incomingAtA.get() == before, "lanes at a: " + incomingAtA.get() + ", before " + before);
            await(g.ca().sendActiveMessage(1, null, null));
        }
    }

    /**
     * Answers to a connect in flight, forged by a third worker with every id a counter would have
     * given it (UCT does not say who sent a message), are not taken for the target's: the connect
     * completes when the target answers.
     */
    @Test
    void aForgedAnswerDoesNotEndAConnectInFlight() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker b = await(f.newWorker("b"));
            HeldHandler held = new HeldHandler();
            b.setActiveMessageHandler(5, held);
            List<UcxWireup.Message> refusals = new java.util.ArrayList<>();
            for (long id = -64; id <= 256; id++) {
                refusals.add(new UcxWireup.Refused(id, (id & 1) == 0, "forged"));
            }
            Endpoint first = await(g.a().connect(b.address()));
            first.sendActiveMessage(5, null, null); // b's progress thread waits in the handler from now
            assertTrue(held.entered.await(20, TimeUnit.SECONDS), "b's handler holds its progress thread");
            java.util.concurrent.CompletableFuture<Endpoint> second = g.a().connect(b.address()).toCompletableFuture();
            try {
                awaitDialing(g); // a's agent has the connect in flight: the forged answers meet it
                g.send(refusals.toArray(new UcxWireup.Message[0]));
                assertTrue(!second.isDone(), "the connect ended before its target answered: " + second);
            } finally {
                held.release();
            }
            Endpoint ab = second.get(20, TimeUnit.SECONDS);
            await(ab.sendActiveMessage(5, null, null));
        }
    }
}
