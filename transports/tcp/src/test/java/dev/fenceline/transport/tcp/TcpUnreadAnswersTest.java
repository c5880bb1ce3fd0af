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

    /** @return the answer bytes the target had queued when it closed the connection, or -1 if it did not */
    private static long heldWhileUnread(String queuedBytes, boolean expectClosed) throws Exception {
        try (CapturedLog seen = CapturedLog.of(TargetHandler.class)) {
            return heldWhileUnread(queuedBytes, expectClosed, seen);
        }
    }

    private static long heldWhileUnread(String queuedBytes, boolean expectClosed,
            CapturedLog seen) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.tcp.limits { queued-bytes = " + queuedBytes + ", unread-timeout = 2s }\n"
                        // An origin that lets every GET be outstanding at once, as a hostile client would.
                        + "fenceline.transport.tcp.window = 256MiB\n"
                        + "fenceline.endpoint.keepalive.interval = 0")
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker origin = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker target = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = target.allocate((long) GETS * SIZE);
            try (LoopbackProxy proxy = new LoopbackProxy("127.0.0.1",
                    TcpAddress.decode(target.address().transportAddress("tcp")).get(0))) {
                WorkerAddress viaProxy = new WorkerAddress(target.address().workerId(), target.address().name(),
                        Map.of("tcp", TcpAddress.encode(List.of(proxy.address()))));
                Endpoint ep = origin.connect(viaProxy).toCompletableFuture().get(10, TimeUnit.SECONDS);
                RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
                List<ByteBuffer> into = new ArrayList<>();
                for (int i = 0; i < GETS; i++) {
                    into.add(ByteBuffer.allocateDirect(SIZE));
                }
                long before = direct();
                proxy.holdReplies();
                List<CompletableFuture<Void>> gets = new ArrayList<>();
                for (int i = 0; i < GETS; i++) {
                    gets.add(ep.get(into.get(i), region.address() + (long) i * SIZE, key).toCompletableFuture());
                }
                long peak = 0;
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
                while (System.nanoTime() < until) {
                    peak = Math.max(peak, direct() - before);
                    Thread.sleep(20); // sampling from the test's thread
                }
                String closing = seen.messages().stream().filter(m -> m.contains("answers unread")).findFirst()
                        .orElse(null);
                System.out.printf("unread answers, queued-bytes = %s: the allocator grew %d MiB, %s%n", queuedBytes,
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
        long queued = heldWhileUnread("1MiB", true);
        // The client asked for 160 x 256 KiB = 40 MiB; the target queued the limit and one answer more.
        assertTrue(queued <= (1 << 20) + 2L * SIZE, "with a 1 MiB limit the target queued " + queued + " bytes");
    }
}
