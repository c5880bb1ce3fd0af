package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Replies that wait for room are kept in order, and no more of them than the bounds: a peer that
 * sends requests and never takes the answers (here a posix iface that never progresses, whose
 * queue fills) has its channel failed, naming the bound, rather than this worker holding them
 * without end; a peer's channels together are bounded, and all channels together, past which the
 * channel holding the most fails.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSenderTest {
    @BeforeEach
    void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void repliesAPeerNeverTakesAreBounded() {
        UctResource posix = UcxNative.resources().stream()
                .filter(r -> r.transport().equals("posix")).findFirst()
                .orElseThrow(() -> new AssertionError("no posix in " + UcxNative.resources()));
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(posix, Map.of());
            UctIface b = w.open(posix, Map.of()); // never progressed: it takes nothing
            UctEndpoint ep = a.connect(b.address());
            UcxPeer peer = new UcxPeer(UUID.randomUUID(), new UcxAddress("h", 1, 1, List.of(), null));
            UcxChannel ch = new UcxChannel(1, peer, a, 0, 0, ep, UcxWireup.Mode.IFACE, false, UcxChannel.State.READY);
            List<String> failures = new ArrayList<>();
            UcxSender sender = new UcxSender((channel, why) -> {
                failures.add(why);
                channel.state = UcxChannel.State.FAILED;
            });
            int size = 4096;
            UnsafeBuffer reply = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
            long most = UcxSender.MAX_BACKLOG_BYTES / size + 1000;
            int sent = 0;
            while (failures.isEmpty() && sent < most) {
                reply.putLong(0, sent);
                sender.send(ch, 3, reply, size);
                sent++;
                assertTrue(ch.backlogBytes <= UcxSender.MAX_BACKLOG_BYTES, "kept " + ch.backlogBytes);
            }
            assertEquals(1, failures.size(), "failed once the bound was reached, after " + sent + " replies");
            assertTrue(failures.get(0).contains("would pass one peer's bound of " + UcxSender.MAX_BACKLOG_BYTES),
                    failures.get(0));
            assertTrue(ch.backlogBytes > UcxSender.MAX_BACKLOG_BYTES - size, "kept up to the bound: " + ch.backlogBytes);
        }
    }

    private static final int SIZE = 4096;

    /** Sends replies on the channel until it or another fails, checking the bounds after each. */
    private static void fill(UcxSender sender, UcxChannel ch, List<String> failures, long perPeer, long total,
            long upTo) {
        UnsafeBuffer reply = new UnsafeBuffer(ByteBuffer.allocateDirect(SIZE));
        for (int sent = 0; failures.isEmpty() && ch.peer.backlogBytes + SIZE <= upTo && sent < 1_000_000; sent++) {
            reply.putLong(0, sent);
            sender.send(ch, 3, reply, SIZE);
            assertTrue(ch.peer.backlogBytes <= perPeer, "one peer's channels keep " + ch.peer.backlogBytes);
            assertTrue(sender.backlogBytes() <= total, "all channels keep " + sender.backlogBytes());
        }
    }

    /** Runs the body with channels from a posix iface to one that never progresses, of the peers given. */
    private interface Body {
        void run(UcxSender sender, List<String> failures, List<UcxChannel> channels);
    }

    private static void withChannels(UcxPeer[] peers, long perPeer, long total, Body body) {
        UctResource posix = UcxNative.resources().stream()
                .filter(r -> r.transport().equals("posix")).findFirst()
                .orElseThrow(() -> new AssertionError("no posix in " + UcxNative.resources()));
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(posix, Map.of());
            UctIface b = w.open(posix, Map.of()); // never progressed: it takes nothing
            List<UcxChannel> channels = new ArrayList<>();
            for (int i = 0; i < peers.length; i++) {
                channels.add(new UcxChannel(i + 1, peers[i], a, 0, 0, a.connect(b.address()), UcxWireup.Mode.IFACE,
                        false, UcxChannel.State.READY));
            }
            List<String> failures = new ArrayList<>();
            UcxSender sender = new UcxSender((channel, why) -> {
                failures.add(channel.id + ": " + why);
                channel.state = UcxChannel.State.FAILED;
            }, perPeer, total);
            body.run(sender, failures, channels);
        }
    }

    private static UcxPeer peer() {
        return new UcxPeer(UUID.randomUUID(), new UcxAddress("h", 1, 1, List.of(), null));
    }

    @Test
    void onePeersChannelsTogetherAreBounded() {
        UcxPeer p = peer();
        long perPeer = 256 << 10;
        withChannels(new UcxPeer[] {p, p}, perPeer, 1L << 30, (sender, failures, ch) -> {
            fill(sender, ch.get(0), failures, perPeer, 1L << 30, perPeer / 2);
            assertTrue(failures.isEmpty() && p.backlogBytes > perPeer / 2 - 2 * SIZE, "the first channel keeps half: "
                    + p.backlogBytes + " " + failures);
            fill(sender, ch.get(1), failures, perPeer, 1L << 30, Long.MAX_VALUE);
            assertEquals(1, failures.size(), failures.toString());
            assertTrue(failures.get(0).startsWith("2: ") && failures.get(0).contains("one peer's bound of " + perPeer),
                    failures.get(0));
            assertEquals(UcxChannel.State.READY, ch.get(0).state, "the other channel serves on");
        });
    }

    @Test
    void allChannelsTogetherAreBoundedAndTheOneHoldingTheMostFails() {
        long perPeer = 1 << 20;
        long total = 3 << 19;
        withChannels(new UcxPeer[] {peer(), peer()}, perPeer, total, (sender, failures, ch) -> {
            fill(sender, ch.get(0), failures, perPeer, total, perPeer);
            long first = ch.get(0).backlogBytes;
            assertTrue(failures.isEmpty() && first > perPeer - 2 * SIZE, "the first keeps its peer's bound: " + first);
            fill(sender, ch.get(1), failures, perPeer, total, Long.MAX_VALUE);
            assertEquals(1, failures.size(), failures.toString());
            assertTrue(failures.get(0).startsWith("1: " + first + " bytes of answers wait for room on it, the most")
                    && failures.get(0).contains("would pass the bound of " + total), failures.get(0));
            assertEquals(0, ch.get(0).backlogBytes, "the failed channel's backlog is let go");
            assertEquals(0, ch.get(0).peer.backlogBytes);
            assertEquals(UcxChannel.State.READY, ch.get(1).state, "the channel that needed the room serves on");
            assertEquals(ch.get(1).backlogBytes + SIZE, sender.backlogBytes() + SIZE, "only its backlog is kept");
        });
    }
}
