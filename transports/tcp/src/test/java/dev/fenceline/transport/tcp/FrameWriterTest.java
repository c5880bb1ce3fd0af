package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lane's writer: frames written on the producer's thread and by the event loop interleave
 * without reordering or losing a byte, whatever the socket takes at once, and nothing is written
 * through a closed connection's descriptor. The reader at the far end is a plain socket that reads
 * in bursts with pauses from a printed seed, so the socket buffers fill and drain.
 */
class FrameWriterTest {
    private static EventLoopGroup group;

    @BeforeAll
    static void start() {
        assumeTrue(Epoll.isAvailable(), () -> "native epoll unavailable: " + Epoll.unavailabilityCause());
        group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
        LeakGuard.assertNoLeaks();
    }

    /** Reads everything one connection sends, pausing now and then. */
    private static final class SlowReader implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        final CompletableFuture<byte[]> received = new CompletableFuture<>();
        volatile Socket accepted;

        SlowReader(long seed) throws IOException {
            Thread t = new Thread(() -> {
                Random r = new Random(seed);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (Socket s = server.accept(); InputStream in = s.getInputStream()) {
                    accepted = s;
                    byte[] chunk = new byte[64 << 10];
                    int n;
                    while ((n = in.read(chunk, 0, 1 + r.nextInt(chunk.length))) >= 0) {
                        out.write(chunk, 0, n);
                        if (r.nextInt(8) == 0) {
                            Thread.sleep(r.nextInt(3));
                        }
                    }
                    received.complete(out.toByteArray());
                } catch (IOException | InterruptedException e) {
                    received.completeExceptionally(e);
                }
            }, "slow-reader");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    private static Channel connect(SlowReader reader) throws InterruptedException {
        return new Bootstrap().group(group).channel(EpollSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(InetAddress.getLoopbackAddress(), reader.server.getLocalPort()).sync().channel();
    }

    /** As the lane does: on the channel's event loop. */
    private static DirectSocket duplicate(Channel ch) throws Exception {
        return ch.eventLoop().submit(() -> DirectSocket.of(ch)).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aSocketIsDuplicatedOnItsEventLoopOnly() throws Exception {
        try (SlowReader reader = new SlowReader(3)) {
            Channel ch = connect(reader);
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> DirectSocket.of(ch));
            ch.close().sync();
        }
    }

    @Test
    void directAndBatchedFramesArriveWholeAndInOrder() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", System.nanoTime());
        System.out.println("FrameWriterTest seed " + seed + " (-Dfenceline.test.seed to repeat)");
        Random r = new Random(seed);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (SlowReader reader = new SlowReader(seed)) {
            Channel ch = connect(reader);
            DirectSocket socket = duplicate(ch);
            assertNotNull(socket, "a plain epoll connection can be written directly");
            AtomicInteger rejected = new AtomicInteger();
            FrameWriter w = new FrameWriter(ch, socket, rejected::incrementAndGet);
            List<Integer> sizes = new ArrayList<>();
            for (int frame = 0; frame < 3_000; frame++) {
                // Mostly small frames, some large enough to fill the socket (a partial direct write).
                int size = r.nextInt(10) == 0 ? 1 + r.nextInt(512 << 10) : 1 + r.nextInt(64);
                byte[] bytes = new byte[size];
                r.nextBytes(bytes);
                expected.write(bytes);
                sizes.add(size);
                ByteBuf b = r.nextInt(20) == 0 ? Unpooled.wrappedBuffer(bytes) // a heap part: the event loop's
                        : PooledByteBufAllocator.DEFAULT.directBuffer(size).writeBytes(bytes);
                w.enqueue(b);
                if (r.nextInt(4) != 0) {
                    w.enqueue(Unpooled.EMPTY_BUFFER); // an empty part, as an active message without a header
                }
                w.send(r.nextBoolean());
            }
            // Everything reaches the socket once a batch runs after the last frame.
            ch.eventLoop().submit(() -> { }).sync();
            ch.writeAndFlush(Unpooled.EMPTY_BUFFER).sync();
            ch.eventLoop().submit(() -> ch.close()).sync();
            ch.closeFuture().sync();
            byte[] got = reader.received.get(60, TimeUnit.SECONDS);
            assertEquals(expected.size(), got.length, "bytes received of " + sizes.size() + " frames");
            assertArrayEquals(expected.toByteArray(), got, "the stream, frame for frame");
            assertTrue(w.directFrames() > 0, "some frames were written on the producer's thread");
            assertEquals(0, rejected.get());
        }
    }

    @Test
    void nothingIsWrittenThroughAClosedConnection() throws Exception {
        try (SlowReader reader = new SlowReader(1)) {
            Channel ch = connect(reader);
            DirectSocket socket = duplicate(ch);
            assertNotNull(socket);
            FrameWriter w = new FrameWriter(ch, socket, () -> { });
            ch.close().sync();
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(42);
            assertEquals(-1, socket.write(b), "the duplicate closed with the channel");
            w.enqueue(b);
            w.send(true);
            ch.eventLoop().submit(() -> { }).sync(); // the batch that drops it
            assertEquals(0, b.refCnt(), "the frame was released, not sent");
            assertEquals(0, w.directFrames());
            assertArrayEquals(new byte[0], reader.received.get(10, TimeUnit.SECONDS));
        }
    }

    /**
     * The connection failed (the event loop dropped what was queued) while the producer was between
     * the parts of one frame: the parts it queues after that must not reach the socket, where the
     * peer would read the rest of a frame as the start of the next one.
     */
    @Test
    void theRestOfAFrameWhoseStartWasDroppedIsNotWritten() throws Exception {
        try (SlowReader reader = new SlowReader(3)) {
            Channel ch = connect(reader);
            DirectSocket socket = duplicate(ch);
            assertNotNull(socket);
            FrameWriter w = new FrameWriter(ch, socket, () -> { });
            ByteBuf head = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(1);
            ByteBuf tail = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(2);
            ByteBuf next = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(3);
            w.enqueue(head);
            ch.eventLoop().submit(w::release).sync(); // the lane failed; its channel is not closed yet
            assertEquals(0, head.refCnt(), "the queued start of the frame was dropped");
            w.enqueue(tail);
            w.send(true);
            w.enqueue(next);
            w.send(false);
            ch.eventLoop().submit(() -> { }).sync(); // a batch, had one been scheduled
            assertEquals(0, tail.refCnt(), "the rest of the frame was released, not sent");
            assertEquals(0, next.refCnt(), "a later frame was released, not sent");
            assertEquals(0, w.directFrames());
            ch.close().sync();
            assertArrayEquals(new byte[0], reader.received.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void nioConnectionsAreWrittenByTheirEventLoopOnly() throws Exception {
        EventLoopGroup nio = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (SlowReader reader = new SlowReader(2)) {
            Channel ch = new Bootstrap().group(nio).channel(NioSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(InetAddress.getLoopbackAddress(), reader.server.getLocalPort()).sync().channel();
            assertNull(duplicate(ch));
            FrameWriter w = new FrameWriter(ch, null, () -> { });
            w.enqueue(PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(7));
            w.send(true);
            ch.eventLoop().submit(() -> { }).sync();
            ch.close().sync();
            byte[] got = reader.received.get(10, TimeUnit.SECONDS);
            assertEquals(8, got.length);
            assertEquals(0, w.directFrames());
        } finally {
            nio.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
