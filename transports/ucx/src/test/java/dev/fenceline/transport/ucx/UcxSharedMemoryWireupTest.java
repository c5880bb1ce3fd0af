package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A CONNECT makes channels on a worker's shared memory only if it came over shared memory, which only
 * a process of the worker's user can write (its posix queue opens through /proc): one that came over
 * the network (here UCT tcp on loopback) could otherwise have the worker map and write the queue of
 * any process of its user. The origin sends a CONNECT that makes such a channel over shared memory,
 * and any other over its first candidate (a peer of this host under another user reaches none of the
 * worker's shared memory, whatever UCT says).
 */
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSharedMemoryWireupTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** Two workers over [tcp, posix], their lanes on tcp: over c's tcp channel a tcp channel is made, a posix one not. */
    @Test
    void overTheNetworkAConnectMakingSharedMemoryChannelsIsDropped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [tcp, posix], devices = [lo], tcp-unchecked-writes = accept }\n"
                + "fenceline.endpoint.keepalive.timeout = 60s"))) {
            WireupForgery g = WireupForgery.open(f); // connected both ways, a message each way
            UcxChannel tcp = g.toA();
            assertEquals("tcp", tcp.iface.resource().transport(), "c's lanes to a are on tcp: " + g.ca().lanes());
            int cPosix = ifaceIndex(g.c(), "posix");
            int aPosix = ifaceIndex(g.a(), "posix");
            long made = g.atA(WireupForgery::channelsMade);

            sendOn(g, tcp, connect(g, cPosix, aPosix, 0x7e57_0001L));
            assertEquals(made, (long) g.atA(WireupForgery::channelsMade), "a posix channel over tcp: dropped");

            sendOn(g, tcp, connect(g, tcp.ifaceIndex, tcp.peerIface, 0x7e57_0002L));
            assertEquals(made + 1, (long) g.atA(WireupForgery::channelsMade), "a tcp channel over tcp: made");
        }
    }

    /** The wireup's iface: shared memory where the CONNECT makes a channel there, else the first. */
    @Test
    void aConnectMakingSharedMemoryChannelsGoesOverSharedMemory() {
        try (UctWorker w = UctWorker.create()) {
            UctIface tcp = w.open(UcxAssumptions.resource("tcp", "lo"), Map.of());
            UctIface posix = w.open(UcxAssumptions.resource("posix", "memory"), Map.of());
            List<UcxLanePlanner.Candidate> candidates = List.of(new UcxLanePlanner.Candidate(0, 0, tcp),
                    new UcxLanePlanner.Candidate(1, 1, posix));
            assertSame(posix, UcxLanePlanner.wireupCandidate(candidates, true).iface());
            assertSame(tcp, UcxLanePlanner.wireupCandidate(candidates, false).iface());
            assertSame(tcp, UcxLanePlanner.wireupCandidate(candidates.subList(0, 1), true).iface(),
                    "none on shared memory: the first");
        }
    }

    private static UcxWireup.Connect connect(WireupForgery g, int cIface, int aIface, long channel) {
        return new UcxWireup.Connect(channel, UUID.randomUUID(), g.c().address().transportAddress("ucx"),
                List.of(new UcxWireup.Channel(channel, cIface, aIface, UcxWireup.Mode.IFACE, new byte[0])),
                List.of(new UcxWireup.Lane(channel + 1, 0)));
    }

    private static int ifaceIndex(dev.fenceline.Worker w, String transport) {
        List<UcxAddress.Iface> ifaces = UcxAddress.decode(w.address().transportAddress("ucx")).ifaces();
        for (int i = 0; i < ifaces.size(); i++) {
            if (ifaces.get(i).transport().equals(transport)) {
                return i;
            }
        }
        throw new AssertionError("no " + transport + " iface in " + ifaces);
    }

    /** Has c send the message on that channel of its (from its agent thread), then a message behind it. */
    private static void sendOn(WireupForgery g, UcxChannel channel, UcxWireup.Message m) throws Exception {
        java.lang.reflect.Method send = UcxWiring.class.getDeclaredMethod("send", UcxChannel.class,
                UcxWireup.Message.class);
        send.setAccessible(true);
        UcxWiring wiring = WireupForgery.wiring(g.lane());
        AtomicReference<Throwable> failed = new AtomicReference<>();
        g.c().setActiveMessageHandler(7, (h, p) -> {
            try {
                send.invoke(wiring, channel, m);
            } catch (ReflectiveOperationException e) {
                failed.set(e);
            }
        });
        WireupForgery.await(g.ac().sendActiveMessage(7, null, null));
        assertTrue(failed.get() == null, String.valueOf(failed.get()));
        WireupForgery.await(g.ca().sendActiveMessage(1, null, null)); // behind it on c's connection
    }
}
