package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A CONNECT makes channels on a worker's shared memory only if it came over shared memory, which only
 * a process of the worker's user can write (its posix queue opens through /proc): one that came over
 * the network (here UCT tcp on loopback) could otherwise have the worker map and write the queue of
 * any process of its user. Two workers over [tcp, posix] wire up over posix (the wireup prefers
 * shared memory) and carry their lanes on tcp; the same CONNECT making a posix channel is dropped
 * when c sends it on its tcp channel, and served on its posix one.
 */
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSharedMemoryWireupTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void aConnectMakingSharedMemoryChannelsIsServedOnlyOverSharedMemory() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [tcp, posix], devices = [lo], tcp-unchecked-writes = accept }\n"
                + "fenceline.endpoint.keepalive.timeout = 60s"))) {
            WireupForgery g = WireupForgery.open(f); // connected both ways, a message each way
            UcxChannel tcp = channelOn(g, "tcp");
            UcxChannel posix = channelOn(g, "posix");
            assertTrue(tcp != null, "c's lanes to a are on tcp: " + g.ca().lanes());
            assertTrue(posix != null, "c's wireup to a went over posix");
            int aPosix = ifaceIndex(g.a(), "posix");
            long made = g.atA(WireupForgery::channelsMade);

            sendOn(g, tcp, connect(g, posix.ifaceIndex, aPosix, 0x7e57_0001L));
            assertEquals(made, (long) g.atA(WireupForgery::channelsMade), "over tcp: dropped, no channel made");

            sendOn(g, posix, connect(g, posix.ifaceIndex, aPosix, 0x7e57_0002L));
            assertEquals(made + 1, (long) g.atA(WireupForgery::channelsMade), "over posix: the channel made");
        }
    }

    private static UcxWireup.Connect connect(WireupForgery g, int cIface, int aIface, long channel) {
        return new UcxWireup.Connect(channel, UUID.randomUUID(), g.c().address().transportAddress("ucx"),
                List.of(new UcxWireup.Channel(channel, cIface, aIface, UcxWireup.Mode.IFACE, new byte[0])),
                List.of(new UcxWireup.Lane(channel + 1, 0)));
    }

    /** @return c's channel to a on that transport: a lane's, or the wireup's */
    private static UcxChannel channelOn(WireupForgery g, String transport) throws Exception {
        for (LaneInfo l : g.ca().lanes()) {
            UcxLane lane = UcxLane.byId(l.connectionId());
            if (lane != null && lane.channel.iface.resource().transport().equals(transport)) {
                return lane.channel;
            }
        }
        AtomicReference<UcxChannel> wireup = new AtomicReference<>();
        g.c().setActiveMessageHandler(6, (h, p) -> wireup.set(g.lane().channel.peer.wireupChannel())); // c's agent
        WireupForgery.await(g.ac().sendActiveMessage(6, null, null));
        UcxChannel c = wireup.get();
        return c != null && c.iface.resource().transport().equals(transport) ? c : null;
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
