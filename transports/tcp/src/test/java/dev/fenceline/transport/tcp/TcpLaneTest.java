package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportOp;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** The origin side of one lane, on an embedded channel: replies, flow control and giving a lane up. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpLaneTest {
    private final List<String> events = new CopyOnWriteArrayList<>();
    private TcpTransport transport;
    private TcpSettings settings;
    private EmbeddedChannel channel;
    private TcpLane lane;

    private final LaneListener listener = new LaneListener() {
        @Override
        public void onCompleted(long token, long value) {
            events.add("completed " + token + " " + value);
        }

        @Override
        public void onFailed(long token, FencelineException error) {
            events.add("failed " + token);
        }

        @Override
        public void onFlushed(long token) {
            events.add("flushed " + token);
        }

        @Override
        public void onFlushFailed(long token, FencelineException error) {
            events.add("flush failed " + token);
        }

        @Override
        public void onReady() {
            events.add("ready");
        }

        @Override
        public void onLaneFailed(Throwable cause) {
            events.add("lane failed");
        }

        @Override
        public void onReplaced(LaneConnection replacement) {
            events.add("replaced");
        }

        @Override
        public void onRecovered(LaneConnection connection) {
            events.add("recovered");
        }

        @Override
        public void onLaneAdded(LaneConnection connection) {
            events.add("added");
        }
    };

    @BeforeEach
    void start() {
        Config section = ConfigFactory.parseString("secret = \"" + TcpConfigs.SECRET + "\"\nqueue-depth = 2\n"
                + "reconnect.min-backoff = 10m\nreconnect.max-backoff = 10m")
                .withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
        settings = TcpSettings.fromSection(section);
        transport = new TcpTransport(new TransportContext(UUID.randomUUID(), "origin", section,
                (RemoteAccessTarget) null), settings);
        Rail rail = new Rail(0, null, new InetSocketAddress("127.0.0.1", 9), UUID.randomUUID());
        channel = new EmbeddedChannel();
        lane = new TcpLane(rail, channel, settings, settings.maxFragment());
        lane.bind(listener);
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.finishAndReleaseAll();
        transport.close();
        LeakGuard.assertNoLeaks();
    }

    private static RemoteKey key() {
        return new RemoteKey(UUID.randomUUID(), 9, 0, 1 << 20, java.util.Map.of());
    }

    @Test
    void aReplyAfterTheEndpointGaveTheLaneUpNeverTouchesTheUsersBuffer() throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(4);
        TransportOp get = TransportOp.rma(TransportOp.Kind.GET, 7, 0, key(), dst).identify(1, 0, 0);
        assertEquals(PostStatus.IN_PROGRESS, lane.post(get));
        lane.abort(new Exception("keepalive unanswered")); // the endpoint restarts the GET elsewhere
        assertNull(lane.answered(ReplyRing.GET, 7, 0, null, Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4})));
        assertArrayEquals(new byte[4], dst.array(), "a late reply must not write into a restarted GET's buffer");
        assertEquals(List.of(), events);
    }

    /**
     * What the endpoint posts between the connection's death and its hearing of it is never written:
     * its revocation says REVOKED (not applied, never will be), so its caller may be told so; what was
     * written before may still apply.
     */
    @Test
    void anOperationPostedAfterTheConnectionDiedIsRevoked() throws Exception {
        TransportOp written = TransportOp.atomic(TransportOp.Kind.ATOMIC_POST, 1, 0, key(), dev.fenceline.AtomicOp.ADD,
                8, 1, 0).identify(1, 0, 0);
        assertEquals(PostStatus.IN_PROGRESS, lane.post(written));
        lane.failed(new java.io.IOException("connection reset"));
        TransportOp late = TransportOp.atomic(TransportOp.Kind.ATOMIC_POST, 2, 0, key(), dev.fenceline.AtomicOp.ADD,
                8, 1, 0).identify(1, 1, 0);
        assertEquals(PostStatus.IN_PROGRESS, lane.post(late), "taken, as a write into a dead socket is");
        dev.fenceline.spi.Revocation r = lane.revoke();
        assertEquals(dev.fenceline.spi.Revocation.Fate.MAY_STILL_APPLY, r.fate(1), "written: it may wait in a buffer");
        assertEquals(dev.fenceline.spi.Revocation.Fate.REVOKED, r.fate(2), "never written");
        assertEquals(List.of("lane failed"), events);
    }

    @Test
    void repliesMatchTheOldestOutstandingOperationAndFreeRoom() throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(4);
        assertEquals(PostStatus.IN_PROGRESS, lane.post(TransportOp.rma(TransportOp.Kind.GET, 1, 0, key(), dst)
                .identify(1, 0, 0)));
        assertEquals(PostStatus.IN_PROGRESS, lane.post(TransportOp.atomic(TransportOp.Kind.ATOMIC_FETCH, 2, 0, key(),
                dev.fenceline.AtomicOp.ADD, 8, 1, 0).identify(1, 1, 0)));
        assertEquals(PostStatus.NO_RESOURCE, lane.post(TransportOp.atomic(TransportOp.Kind.ATOMIC_POST, 3, 0, key(),
                dev.fenceline.AtomicOp.ADD, 8, 1, 0).identify(1, 2, 0)), "queue-depth = 2");
        assertEquals("a reply for token 2 while 1 is the oldest outstanding",
                lane.answered(ReplyRing.OP, 2, 5, null, null));
        assertNull(lane.answered(ReplyRing.GET, 1, 0, null, Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4})));
        lane.readComplete();
        assertNull(lane.answered(ReplyRing.OP, 2, 5, null, null));
        lane.readComplete(); // completions are reported once per read batch
        assertArrayEquals(new byte[] {1, 2, 3, 4}, dst.array());
        assertEquals(List.of("completed 1 0", "ready", "completed 2 5"), events);
        assertEquals(PostStatus.COMPLETED, lane.flush(9), "nothing outstanding: already flushed");
        assertEquals(PostStatus.IN_PROGRESS, lane.keepalive(10), "a keepalive always makes a round trip");
    }
}
