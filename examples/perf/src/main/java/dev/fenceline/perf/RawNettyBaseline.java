package dev.fenceline.perf;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleFunction;

/**
 * What plain Netty does over the same loopback, measured in the same run: a one-way byte stream
 * (the bandwidth ceiling for puts) and a ping-pong of fixed-size messages (the latency floor for
 * one round trip). Same I/O (epoll where available) and one event loop per side, as the tcp
 * transport uses. Where the run's threads spin ({@code --busy-poll}, or the pollers of
 * {@code --caller-progress} running the I/O) these loops spin too: a loop that sleeps in
 * {@code epoll_wait} measures how fast an idle CPU wakes (tens of microseconds on a virtual
 * machine), not what Netty costs. No framing, no acknowledgements, no actors: a floor, not a
 * competitor.
 */
final class RawNettyBaseline implements AutoCloseable {
    private final EventLoopGroup server;
    private final EventLoopGroup client;
    private final Class<? extends SocketChannel> channel;
    private final Class<? extends ServerSocketChannel> serverChannel;
    /** TCP_CONGESTION's name, or null for the kernel's default. */
    private final byte[] congestionControl;
    /** What the sockets run under, as the rows name it: the one set, else the kernel's default. */
    private final String congestionRan;
    /** Whether the event loops spin on epoll_wait without a timeout. */
    private final boolean spinning;

    /**
     * @param congestionControl the TCP congestion control of both ends' sockets (as the tcp
     *     transport's {@code congestion-control} sets its lanes'; epoll only), empty for the kernel's
     *     default
     * @param busyPoll whether the event loops spin, as the tcp transport's do with {@code busy-poll}
     *     (epoll only: NIO has no such mode, and its loops sleep)
     */
    RawNettyBaseline(String congestionControl, boolean busyPoll) {
        boolean epoll = Epoll.isAvailable();
        this.congestionControl = congestionControl.isEmpty() || !epoll ? null
                : congestionControl.getBytes(StandardCharsets.US_ASCII);
        this.congestionRan = TcpCongestion.effective(this.congestionControl == null ? "" : congestionControl);
        this.spinning = busyPoll && epoll;
        server = new MultiThreadIoEventLoopGroup(1, ioHandlers(epoll, spinning));
        client = new MultiThreadIoEventLoopGroup(1, ioHandlers(epoll, spinning));
        channel = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        serverChannel = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    private static IoHandlerFactory ioHandlers(boolean epoll, boolean spinning) {
        if (!epoll) {
            return NioIoHandler.newFactory();
        }
        return spinning ? EpollIoHandler.newFactory(0, () -> (tasks, hasTasks) -> SelectStrategy.BUSY_WAIT)
                : EpollIoHandler.newFactory();
    }

    /** @return the event loops (for tests): the server's, then the client's */
    EventLoopGroup[] loops() {
        return new EventLoopGroup[] {server, client};
    }

    /** @return the rows' transport: {@code raw-netty}, or {@code raw-netty-spin} where the loops spin */
    String label() {
        return spinning ? "raw-netty-spin" : "raw-netty";
    }

    /** The server counts bytes and answers one byte when {@code total} arrived. */
    PerfResult stream(int size, long n, Progress progress) throws Exception {
        long total = size * n;
        CompletableFuture<Void> done = new CompletableFuture<>();
        ByteBuf block = Unpooled.directBuffer(size).writeZero(size);
        try {
            return measured(done, new ChannelInboundHandlerAdapter() {
                private long seen;

                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ByteBuf b = (ByteBuf) msg;
                    seen += b.readableBytes();
                    b.release();
                    if (seen >= total) {
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[1]), ctx.voidPromise());
                    }
                }
            }, new ChannelInboundHandlerAdapter() {
                private long sent;

                @Override
                public void channelActive(ChannelHandlerContext ctx) {
                    pump(ctx);
                }

                @Override
                public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                    pump(ctx);
                }

                private void pump(ChannelHandlerContext ctx) {
                    while (sent < n && ctx.channel().isWritable()) {
                        ctx.write(block.retainedDuplicate(), ctx.voidPromise());
                        if ((++sent & 255) == 0) {
                            progress.set(sent);
                        }
                    }
                    ctx.flush();
                }

                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ((ByteBuf) msg).release();
                    done.complete(null);
                }
            }, seconds -> {
                progress.set(n);
                return PerfResult.throughput("stream_bw", label(), size, n, seconds)
                        .withTcpCongestionControl(congestionRan);
            });
        } finally {
            block.release(); // what is still being written holds views of its own
        }
    }

    /** The server echoes every {@code size} bytes; the client records half of each round trip. */
    PerfResult pingPong(int size, int n, Progress progress) throws Exception {
        Latencies h = new Latencies();
        CompletableFuture<Void> done = new CompletableFuture<>();
        // Each side sends views of one message of its own, as the stream does: a fresh direct buffer
        // per message would put the JDK's allocation of direct memory into the floor.
        ByteBuf pong = Unpooled.directBuffer(size).writeZero(size);
        ByteBuf ping = Unpooled.directBuffer(size).writeZero(size);
        try {
            return measured(done, new ChannelInboundHandlerAdapter() {
                private int pending;

                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ByteBuf b = (ByteBuf) msg;
                    pending += b.readableBytes();
                    b.release();
                    while (pending >= size) {
                        pending -= size;
                        ctx.write(pong.retainedDuplicate(), ctx.voidPromise());
                    }
                    ctx.flush();
                }
            }, new ChannelInboundHandlerAdapter() {
                private int pending;
                private int count;
                private long t0;

                @Override
                public void channelActive(ChannelHandlerContext ctx) {
                    send(ctx);
                }

                private void send(ChannelHandlerContext ctx) {
                    t0 = System.nanoTime();
                    ctx.writeAndFlush(ping.retainedDuplicate(), ctx.voidPromise());
                }

                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ByteBuf b = (ByteBuf) msg;
                    pending += b.readableBytes();
                    b.release();
                    if (pending >= size) {
                        pending -= size;
                        h.recordValue((System.nanoTime() - t0) / 2);
                        progress.set(++count);
                        if (count < n) {
                            send(ctx);
                        } else {
                            done.complete(null);
                        }
                    }
                }
            }, seconds -> PerfResult.latency("pingpong_lat", label(), size, h, seconds)
                    .withTcpCongestionControl(congestionRan));
        } finally {
            ping.release(); // what is still being written holds views of its own
            pong.release();
        }
    }

    /**
     * Listens with {@code server}, connects with {@code client} (whose activation starts the run),
     * waits for {@code done} and hands the seconds since the connect to {@code result}; closes the
     * client's channel and the listener on every path (the accepted channel closes as it reads the
     * client's close, or with the event loops).
     */
    private PerfResult measured(CompletableFuture<Void> done, ChannelInboundHandlerAdapter server,
            ChannelInboundHandlerAdapter client, DoubleFunction<PerfResult> result) throws Exception {
        Channel listener = listen(done, server);
        try {
            long start = System.nanoTime();
            Channel c = connect(listener, done, client);
            try {
                done.get(120, TimeUnit.SECONDS);
                return result.apply((System.nanoTime() - start) / 1e9);
            } finally {
                c.close().sync();
            }
        } finally {
            listener.close().sync();
        }
    }

    private Channel listen(CompletableFuture<Void> done, ChannelInboundHandlerAdapter handler)
            throws InterruptedException {
        return new ServerBootstrap().group(server).channel(serverChannel)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        congestion(ch);
                        ch.pipeline().addLast(handler, failing(done));
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    private Channel connect(Channel listener, CompletableFuture<Void> done, ChannelInboundHandlerAdapter handler)
            throws InterruptedException {
        return new Bootstrap().group(client).channel(channel).option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        congestion(ch);
                        ch.pipeline().addLast(handler, failing(done));
                    }
                }).connect(listener.localAddress()).sync().channel();
    }

    /**
     * The pipeline's last handler: a failure (a write's, which a void promise reports here, or a
     * handler's), or a connection that closes before the run is done, ends the run at once with
     * its cause, rather than at the run's timeout.
     */
    private static ChannelInboundHandlerAdapter failing(CompletableFuture<Void> done) {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                done.completeExceptionally(cause);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                // Once the run is done the channels close: completing it again then does nothing.
                done.completeExceptionally(new java.io.IOException("raw Netty's connection " + ctx.channel()
                        + " closed before the run was done"));
            }
        };
    }

    private void congestion(Channel ch) {
        if (congestionControl != null) {
            TcpCongestion.set(ch, congestionControl);
        }
    }

    @Override
    public void close() {
        server.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        client.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
