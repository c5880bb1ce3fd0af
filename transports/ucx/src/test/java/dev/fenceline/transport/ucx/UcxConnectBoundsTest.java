package dev.fenceline.transport.ucx;

import static dev.fenceline.transport.ucx.WireupForgery.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * A CONNECT is checked whole before any channel it asks for is made: one refused (here, its last
 * channel names an iface the target does not have, or its lanes pass the target's bound) makes no
 * UCT endpoint for the channels before it, and costs the target's log a line only at powers of two,
 * however many channels it names; the peers already connected are served.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxConnectBoundsTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static int replyChannels(UcxWiring w) {
        int n = 0;
        for (UcxPeer p : w.allPeers()) {
            n += p.replyChannels.size();
        }
        return n;
    }

    @Test
    void refusedConnectsMakeNoChannelsAndFloodNoLog() throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], max-lanes-per-peer = 2 }\n"
                + "fenceline.endpoint.keepalive.timeout = 60s"))) {
            WireupForgery g = WireupForgery.open(f);
            int before = g.atA(UcxConnectBoundsTest::replyChannels);
            long seed = 20261206;
            System.out.println("refusedConnectsMakeNoChannelsAndFloodNoLog: seed " + seed);
            Random random = new Random(seed);
            List<UcxWireup.Message> connects = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                List<UcxWireup.Channel> channels = new ArrayList<>();
                for (int k = 0; k < 8; k++) { // seven to c's iface, then one to an iface a does not have
                    channels.add(new UcxWireup.Channel(random.nextLong(), g.toA().ifaceIndex,
                            k < 7 ? g.toA().peerIface : UcxAddress.MAX_IFACES - 1, UcxWireup.Mode.IFACE, new byte[0]));
                }
                connects.add(new UcxWireup.Connect(random.nextLong(), new UUID(random.nextLong(), random.nextLong()),
                        g.c().address().transportAddress("ucx"), channels, List.of(new UcxWireup.Lane(random.nextLong(),
                                0))));
                // and one whose channels are good but whose lanes pass max-lanes-per-peer
                List<UcxWireup.Channel> good = new ArrayList<>();
                for (int k = 0; k < 7; k++) {
                    good.add(new UcxWireup.Channel(random.nextLong(), g.toA().ifaceIndex, g.toA().peerIface,
                            UcxWireup.Mode.IFACE, new byte[0]));
                }
                connects.add(new UcxWireup.Connect(random.nextLong(), new UUID(random.nextLong(), random.nextLong()),
                        g.c().address().transportAddress("ucx"), good, List.of(new UcxWireup.Lane(random.nextLong(), 0),
                                new UcxWireup.Lane(random.nextLong(), 1), new UcxWireup.Lane(random.nextLong(), 2))));
            }
            int logBefore = logged.list.size();
            long madeBefore = g.atA(WireupForgery::channelsMade);
            g.send(connects.toArray(new UcxWireup.Message[0]));
            long made = g.atA(WireupForgery::channelsMade) - madeBefore;
            assertTrue(made <= connects.size(), connects.size() + " refused connects made " + made
                    + " UCT endpoints: more than the one each refusal goes on");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); // a refusal may wait for room
            while (g.atA(UcxConnectBoundsTest::replyChannels) != before) {
                assertTrue(System.nanoTime() < deadline, "the refused connects' channels stay: "
                        + g.atA(UcxConnectBoundsTest::replyChannels) + ", " + before + " before");
                Thread.sleep(10);
            }
            List<String> lines = new ArrayList<>();
            for (ILoggingEvent e : logged.list.subList(logBefore, logged.list.size())) {
                if (e.getLevel().isGreaterOrEqual(Level.WARN) && e.getFormattedMessage().startsWith("ucx a:")) {
                    lines.add(e.getFormattedMessage());
                }
            }
            assertTrue(lines.size() <= 16, "80 refused connects of 7 or 8 channels each logged " + lines.size()
                    + " lines: " + lines.subList(0, Math.min(10, lines.size())));
            await(g.ca().sendActiveMessage(1, null, null)); // c is served
        } finally {
            root.detachAppender(logged);
        }
    }

    /**
     * Channel ids name reply channels across peers: a CONNECT under a fresh worker id that makes a
     * channel of an id another peer's channel has is refused, rather than its channel going uncounted.
     */
    @Test
    void aChannelIdAnotherPeerHasIsRefused() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            int before = g.atA(UcxConnectBoundsTest::replyChannels);
            long madeBefore = g.atA(WireupForgery::channelsMade);
            long id = 0x5EED_1D5L;
            for (int i = 0; i < 2; i++) {
                g.send(new UcxWireup.Connect(90 + i, UUID.randomUUID(), g.c().address().transportAddress("ucx"),
                        List.of(new UcxWireup.Channel(id, g.toA().ifaceIndex, g.toA().peerIface, UcxWireup.Mode.IFACE,
                                new byte[0])), List.of(new UcxWireup.Lane(0x1000L + i, 0))));
            }
            assertEquals(before + 1, g.atA(UcxConnectBoundsTest::replyChannels), "the first took the id, and only it");
            assertEquals(1, g.atA(WireupForgery::channelsMade) - madeBefore, "the second made no endpoint, not even to"
                    + " refuse: its first channel is the one refused");
            await(g.ca().sendActiveMessage(1, null, null));
        }
    }
}
