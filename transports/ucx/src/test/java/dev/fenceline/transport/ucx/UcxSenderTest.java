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
 * without end; a peer's channels together are bounded, and all channels together: past a bound the
 * channel whose oldest waiting message waited longest fails, not the one holding the most.
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
            assertTrue(failures.get(0).contains("would pass the bound of " + UcxSender.MAX_BACKLOG_BYTES),
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
    void onePeersChannelsTogetherAreBoundedAndItsChannelWaitingLongestFails() {
        UcxPeer p = peer();
        long perPeer = 256 << 10;
        withChannels(new UcxPeer[] {p, p}, perPeer, 1L << 30, (sender, failures, ch) -> {
            fill(sender, ch.get(0), failures, perPeer, 1L << 30, perPeer / 2);
            assertTrue(failures.isEmpty() && p.backlogBytes > perPeer / 2 - 2 * SIZE, "the first channel keeps half: "
                    + p.backlogBytes + " " + failures);
            fill(sender, ch.get(1), failures, perPeer, 1L << 30, Long.MAX_VALUE);
            assertEquals(1, failures.size(), failures.toString());
            assertTrue(failures.get(0).startsWith("1: ") && failures.get(0).contains("would pass the bound of "
                    + perPeer), failures.get(0));
            assertEquals(0, ch.get(0).backlogBytes, "the failed channel's backlog is let go");
            assertEquals(UcxChannel.State.READY, ch.get(1).state, "the channel that needed the room serves on");
            failures.clear();
            fill(sender, ch.get(1), failures, perPeer, 1L << 30, Long.MAX_VALUE);
            assertEquals(1, failures.size(), "alone, it fails itself at the bound: " + failures);
            assertTrue(failures.get(0).startsWith("2: "), failures.get(0));
        });
    }

    /**
     * Past all channels' bound, the channel whose backlog went longest without draining fails, not
     * the one holding the most: the first channel waits from before the second, with less.
     */
    @Test
    void allChannelsTogetherAreBoundedAndTheOneWaitingLongestFails() {
        long perPeer = 2 << 20;
        long total = 3 << 19;
        withChannels(new UcxPeer[] {peer(), peer()}, perPeer, total, (sender, failures, ch) -> {
            fill(sender, ch.get(0), failures, perPeer, total, 1 << 19);
            long first = ch.get(0).backlogBytes;
            assertTrue(failures.isEmpty() && first > (1 << 19) - 2 * SIZE, "the first keeps half its bound: " + first);
            fill(sender, ch.get(1), failures, perPeer, total, Long.MAX_VALUE);
            assertEquals(1, failures.size(), failures.toString());
            assertTrue(failures.get(0).startsWith("1: ") && failures.get(0).contains("would pass the bound of " + total
                    + "; " + first + " of them on this channel, the oldest waiting"), failures.get(0));
            assertEquals(0, ch.get(0).backlogBytes, "the failed channel's backlog is let go");
            assertEquals(0, ch.get(0).peer.backlogBytes);
            assertEquals(UcxChannel.State.READY, ch.get(1).state, "the channel that needed the room serves on");
            assertEquals(ch.get(1).backlogBytes, sender.backlogBytes(), "only its backlog is kept");
        });
    }

    /** A message that may not make others fail for room (a refusal to a connect) fails its own channel. */
    @Test
    void aMessageThatMayNotEvictFailsItsOwnChannel() {
        long perPeer = 2 << 20;
        long total = 1 << 20;
        withChannels(new UcxPeer[] {peer(), peer()}, perPeer, total, (sender, failures, ch) -> {
            fill(sender, ch.get(0), failures, perPeer, total, total);
            assertTrue(failures.isEmpty() && sender.backlogBytes() > total - SIZE, "full: " + sender.backlogBytes());
            UnsafeBuffer refusal = new UnsafeBuffer(ByteBuffer.allocateDirect(SIZE));
            for (int i = 0; i < 1000 && failures.isEmpty(); i++) { // past the receiver's own queue first
                sender.send(ch.get(1), 3, refusal, SIZE, false);
            }
            assertEquals(1, failures.size(), failures.toString());
            assertTrue(failures.get(0).startsWith("2: "), failures.get(0));
            assertEquals(UcxChannel.State.READY, ch.get(0).state, "the connected peer's channel is kept");
        });
    }

    /**
     * Channels from one iface: one to an iface of the same worker, progressed when the test drains
     * it, one to an iface of a worker never progressed.
     */
    private interface TwoReceivers {
        void run(UctWorker w, UcxSender sender, List<String> failures, UcxChannel drains, UcxChannel never);
    }

    private static void withTwoReceivers(long perPeer, long total, TwoReceivers body) {
        UctResource posix = UcxNative.resources().stream()
                .filter(r -> r.transport().equals("posix")).findFirst()
                .orElseThrow(() -> new AssertionError("no posix in " + UcxNative.resources()));
        try (UctWorker w = UctWorker.create(); UctWorker stuck = UctWorker.create()) {
            UctIface a = w.open(posix, Map.of());
            UctIface drains = w.open(posix, Map.of());
            UctIface never = stuck.open(posix, Map.of());
            UcxChannel toDrains = new UcxChannel(1, peer(), a, 0, 0, a.connect(drains.address()),
                    UcxWireup.Mode.IFACE, false, UcxChannel.State.READY);
            UcxChannel toNever = new UcxChannel(2, peer(), a, 0, 0, a.connect(never.address()),
                    UcxWireup.Mode.IFACE, false, UcxChannel.State.READY);
            List<String> failures = new ArrayList<>();
            UcxSender sender = new UcxSender((channel, why) -> {
                failures.add(channel.id + ": " + why);
                channel.state = UcxChannel.State.FAILED;
            }, perPeer, total);
            body.run(w, sender, failures, toDrains, toNever);
        }
    }

    /** Progresses the worker and retries the sender until the channel holds at most {@code upTo} bytes. */
    private static void drain(UctWorker w, UcxSender sender, UcxChannel ch, long upTo) {
        for (int i = 0; i < 100_000 && ch.backlogBytes > upTo; i++) {
            w.progress();
            w.drain(new UctEventHandler() {
                @Override
                public void completed(long token, int status, long value) {
                }

                @Override
                public void activeMessage(long iface, int id, org.agrona.DirectBuffer data, int offset, int length) {
                }

                @Override
                public void ready(long token) {
                    if (token == ch.ep.handle) {
                        sender.ready(ch);
                    }
                }

                @Override
                public void endpointFailed(long endpoint, int status) {
                    throw new AssertionError("endpoint failed: " + status);
                }
            });
            sender.retry();
        }
        assertTrue(ch.backlogBytes <= upTo, "drained to " + ch.backlogBytes + ", not " + upTo);
    }

    /**
     * A channel that keeps draining is not the one that fails for room, though it waited first and
     * holds the most: its messages older than the stalled channel's went.
     */
    @Test
    void aChannelThatKeepsDrainingIsNotTheOneThatFails() {
        long perPeer = 4 << 20;
        long total = 1200 << 10;
        withTwoReceivers(perPeer, total, (w, sender, failures, draining, stalled) -> {
            fill(sender, draining, failures, perPeer, total, 300 << 10);
            fill(sender, stalled, failures, perPeer, total, 300 << 10);
            long before = draining.backlogBytes;
            fill(sender, draining, failures, perPeer, total, before + (400 << 10));
            long newer = draining.backlogBytes - before;
            drain(w, sender, draining, newer); // every message kept before the stalled channel's went
            assertTrue(draining.backlogBytes > 0 && failures.isEmpty(), "still waiting: " + draining.backlogBytes
                    + " " + failures);
            fill(sender, draining, failures, perPeer, total, perPeer);
            assertTrue(!failures.isEmpty() && failures.get(0).startsWith("2: "), "the stalled channel fails first: "
                    + failures);
            assertEquals(UcxChannel.State.READY, draining.state);
        });
    }

    /**
     * A channel whose receiver takes a message now and then still has its oldest waiting: it fails
     * for room before a channel whose messages came after that one.
     */
    @Test
    void aChannelThatTakesAMessageNowAndThenStillLooksOld() {
        long perPeer = 4 << 20;
        long total = 1 << 20;
        withTwoReceivers(perPeer, total, (w, sender, failures, trickling, stalled) -> {
            fill(sender, trickling, failures, perPeer, total, 400 << 10);
            fill(sender, stalled, failures, perPeer, total, 300 << 10);
            long before = trickling.backlogBytes;
            drain(w, sender, trickling, before - 1); // some went; its oldest waiting came before the other's
            assertTrue(trickling.backlogBytes > 0 && failures.isEmpty(), "still waiting: " + trickling.backlogBytes);
            fill(sender, stalled, failures, perPeer, total, perPeer);
            assertTrue(!failures.isEmpty() && failures.get(0).startsWith("1: "), "the trickling channel fails: "
                    + failures);
            assertEquals(UcxChannel.State.READY, stalled.state);
        });
    }
}
