package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client that sends GETs and never reads the answers (a proxy that stops reading the target's
 * side): the target queues at most {@code limits.queued-bytes} for it, then stops reading its
 * requests, and closes the connection after {@code limits.unread-timeout}, saying in its log how
 * many bytes waited, once (not again for each queued answer the close fails). (Before the target paused within a read, one read's GETs queued 33 MiB here.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpUnreadAnswersTest {
    private static final int GETS = 160;
    private static final int SIZE = 256 << 10;

    private static long direct() {
        return ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
    }

    /**
     * What a client that never reads its answers makes the target hold.
     *
     * @param limits the target's {@code limits} beside the unread timeout
     * @param gets how many GETs of 256 KiB the client sends
     * @param others endpoints of another worker that connect to the target directly and read their
     *     answers, each one more connection that shares {@code queued-bytes-total}
     * @param othersLater whether they connect once the GETs were answered and one unread timeout
     *     passed, rather than before
     * @param handlerMeanwhile whether an active message after the GETs runs a handler that holds the
     *     connection while the others connect (its end must judge the room again)
     */
    private record Unread(String limits, int gets, int others, boolean othersLater, boolean handlerMeanwhile) {
        Unread(String limits) {
            this(limits, GETS, 0, false, false);
        }
    }

    /** @return the answer bytes the target had queued when it closed the connection, or -1 if it did not */
    private static long heldWhileUnread(Unread u, boolean expectClosed) throws Exception {
        try (CapturedLog seen = CapturedLog.of(TargetHandler.class)) {
            return heldWhileUnread(u, expectClosed, seen);
        }
    }

    private static void connectOthers(Worker other, Worker target, MemoryRegion region, int n) throws Exception {
        RemoteKey key = other.unpackRemoteKey(region.remoteKey().toBytes());
        for (int i = 0; i < n; i++) {
            Endpoint reading = other.connect(target.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            reading.get(ByteBuffer.allocateDirect(8), region.address(), key).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
        }
    }

    private static long heldWhileUnread(Unread u, boolean expectClosed, CapturedLog seen) throws Exception {
        String limits = u.limits();
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.tcp.limits { " + limits + ", unread-timeout = 2s }\n"
                        // An origin that lets every GET be outstanding at once, as a hostile client would.
                        + "fenceline.transport.tcp.window = 256MiB\n"
                        // The kernel's TCP_USER_TIMEOUT would end a connection the client leaves at a
                        // zero window before the target's own limit does: these tests are about the latter.
                        + "fenceline.transport.tcp.user-timeout = 60s\n"
                        + "fenceline.endpoint.keepalive.interval = 0")
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker origin = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker target = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = target.allocate((long) GETS * SIZE);
            Worker other = f.newWorker("other").toCompletableFuture().get(10, TimeUnit.SECONDS);
            java.util.concurrent.CountDownLatch handlerIn = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch handlerOut = new java.util.concurrent.CountDownLatch(1);
            target.setActiveMessageHandler(9, (h, p) -> {
                handlerIn.countDown();
                try {
                    handlerOut.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            if (!u.othersLater()) {
                connectOthers(other, target, region, u.others());
            }
            try (LoopbackProxy proxy = new LoopbackProxy("127.0.0.1",
                    TcpAddress.decode(target.address().transportAddress("tcp")).get(0))) {
                WorkerAddress viaProxy = new WorkerAddress(target.address().workerId(), target.address().name(),
                        Map.of("tcp", TcpAddress.encode(List.of(proxy.address()))));
                Endpoint ep = origin.connect(viaProxy).toCompletableFuture().get(10, TimeUnit.SECONDS);
                RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
                List<ByteBuffer> into = new ArrayList<>();
                for (int i = 0; i < u.gets(); i++) {
                    into.add(ByteBuffer.allocateDirect(SIZE));
                }
                long before = direct();
                proxy.holdReplies();
                List<CompletableFuture<Void>> gets = new ArrayList<>();
                for (int i = 0; i < u.gets(); i++) {
                    gets.add(ep.get(into.get(i), region.address() + (long) i * SIZE, key).toCompletableFuture());
                }
                if (u.handlerMeanwhile()) {
                    ep.sendActiveMessageImplicit(9, ByteBuffer.allocateDirect(8), ByteBuffer.allocateDirect(8));
                    assertTrue(handlerIn.await(10, TimeUnit.SECONDS), "the handler runs: the GETs left room");
                }
                long peak = 0;
                long sent = System.nanoTime();
                long until = sent + TimeUnit.SECONDS.toNanos(4);
                boolean othersDue = u.othersLater();
                while (System.nanoTime() < until) {
                    peak = Math.max(peak, direct() - before);
                    Thread.sleep(20); // sampling from the test's thread
                    if (othersDue && System.nanoTime() - sent > TimeUnit.MILLISECONDS.toNanos(2_500)) {
                        // 2.5 s after the GETs: had they not fitted its share, the unread timeout (2 s) would have closed it.
                        othersDue = false;
                        assertTrue(seen.messages().stream().noneMatch(m -> m.contains("answers unread")),
                                "under its share before the others come: " + seen.messages());
                        connectOthers(other, target, region, u.others());
                        handlerOut.countDown();
                        // Told now, it has the unread timeout (2 s) to drain: room to spare on a busy machine.
                        until = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
                    }
                    if (!othersDue && u.othersLater()
                            && seen.messages().stream().anyMatch(m -> m.contains("answers unread"))) {
                        Thread.sleep(200); // the failed writes of its queued answers, which must not be logged
                        break;
                    }
                }
                String closing = seen.messages().stream().filter(m -> m.contains("answers unread")).findFirst()
                        .orElse(null);
                System.out.printf("unread answers, %s: the allocator grew %d MiB, %s%n", limits,
                        peak >> 20, closing == null ? "connection still open" : "target: " + closing);
                assertTrue((closing != null) == expectClosed, "closed after the unread timeout: " + closing);
                proxy.heal();
                if (closing == null) {
                    return -1;
                }
                // Closing fails every queued answer's write, each an exception event: none may cost a log line.
                List<String> more = seen.messages().stream()
                        .filter(t -> t.contains("closing connection") && !t.contains("answers unread")).toList();
                assertTrue(more.isEmpty(), more.size() + " more lines: " + more.stream().limit(3).toList());
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("left (\\d+) bytes").matcher(closing);
                assertTrue(m.find(), closing);
                return Long.parseLong(m.group(1));
            }
        }
    }

    @Test
    void aClientThatNeverReadsMakesTheTargetHoldAtMostTheLimitThenLosesItsConnection() throws Exception {
        long queued = heldWhileUnread(new Unread("queued-bytes = 1MiB"), true);
        // The client asked for 160 x 256 KiB = 40 MiB; the target queued the limit and one answer more.
        assertTrue(queued <= (1 << 20) + 2L * SIZE, "with a 1 MiB limit the target queued " + queued + " bytes");
    }

    @Test
    void connectionsShareTheTotalLimit() throws Exception {
        // Three connections answering (the unread one and two that read) share 3 MiB: 1 MiB each,
        // where queued-bytes alone would let the unread one queue 32 MiB.
        long queued = heldWhileUnread(new Unread("queued-bytes = 32MiB, queued-bytes-total = 3MiB", GETS, 2, false,
                false), true);
        assertTrue(queued <= (1 << 20) + 2L * SIZE, "its share is 1 MiB; the target queued " + queued + " bytes");
    }

    @Test
    void aConnectionGoneQuietOverItsFallenShareMustDrainOrIsClosed() throws Exception {
        // Alone, the client's share is all 32 MiB, and its 30 MiB of GETs fit: it waits with its answers
        // queued (what the kernel's buffers do not hold) and nothing more to send. Three more
        // connections make its share 8 MiB: told so, it must drain to half of it within the unread
        // timeout, or lose its connection.
        long queued = heldWhileUnread(new Unread("queued-bytes = 32MiB, queued-bytes-total = 32MiB", 120, 3, true,
                false), true);
        assertTrue(queued > 8L << 20, "closed over its share of 8 MiB: " + queued + " bytes");
    }

    @Test
    void aConnectionWhoseShareFellWhileAHandlerRanIsJudgedWhenItEnds() throws Exception {
        // As above, but an active message's handler holds the connection while the others connect:
        // it is not told then (it reads nothing anyway), and the handler's end pauses it for good
        // reason, with the unread timeout running.
        long queued = heldWhileUnread(new Unread("queued-bytes = 32MiB, queued-bytes-total = 32MiB", 120, 3, true,
                true), true);
        assertTrue(queued > 8L << 20, "closed over its share of 8 MiB: " + queued + " bytes");
    }
}
