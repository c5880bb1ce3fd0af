package dev.fenceline.transport.tcp;

import dev.fenceline.ConfigurationException;
import io.netty.bootstrap.AbstractBootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.SelectStrategy;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.net.ExtendedSocketOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Native epoll where it is available (or required), NIO otherwise; and the socket options of each. */
record NettyIo(boolean epoll, IoHandlerFactory handlers, Class<? extends SocketChannel> channel,
        Class<? extends ServerSocketChannel> serverChannel) {
    private static final Logger LOG = LoggerFactory.getLogger(NettyIo.class);
    private static final AtomicBoolean FALLBACK_LOGGED = new AtomicBoolean();

    /**
     * @param io auto, epoll or nio
     * @param busyPoll whether epoll event loops spin instead of sleeping in epoll_wait
     * @return the choice
     */
    static NettyIo choose(String io, boolean busyPoll) {
        boolean useEpoll = switch (io) {
            case "nio" -> false;
            case "epoll" -> {
                if (!Epoll.isAvailable()) {
                    throw new ConfigurationException(TcpSettings.SECTION + ".io = epoll, but native epoll is"
                            + " unavailable: " + Epoll.unavailabilityCause());
                }
                yield true;
            }
            default -> {
                if (!Epoll.isAvailable() && FALLBACK_LOGGED.compareAndSet(false, true)) {
                    LOG.info("tcp: native epoll unavailable, using NIO (no TCP_USER_TIMEOUT; dead rails under"
                            + " traffic are found by the runtime keepalive): {}", String.valueOf(
                                    Epoll.unavailabilityCause()));
                }
                yield Epoll.isAvailable();
            }
        };
        return useEpoll
                ? new NettyIo(true, busyPoll ? EpollIoHandler.newFactory(0, NettyIo::busyWait)
                        : EpollIoHandler.newFactory(), EpollSocketChannel.class,
                        EpollServerSocketChannel.class)
                : new NettyIo(false, NioIoHandler.newFactory(), NioSocketChannel.class, NioServerSocketChannel.class);
    }

    /** Every pass of the event loop spins on epoll_wait without a timeout: no sleep, no wake-up. */
    private static SelectStrategy busyWait() {
        return (tasks, hasTasks) -> SelectStrategy.BUSY_WAIT;
    }

    /** Options for a lane's client channel. */
    void clientOptions(AbstractBootstrap<?, ?> b, TcpSettings s) {
        b.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, s.connectTimeout().toMillis()));
        socketOptions(new Setter() {
            @Override
            public <T> void set(ChannelOption<T> option, T value) {
                b.option(option, value);
            }
        }, s);
    }

    /** Options for the channels a listener accepts. */
    void childOptions(ServerBootstrap b, TcpSettings s) {
        socketOptions(new Setter() {
            @Override
            public <T> void set(ChannelOption<T> option, T value) {
                b.childOption(option, value);
            }
        }, s);
    }

    private interface Setter {
        <T> void set(ChannelOption<T> option, T value);
    }

    @SuppressWarnings("deprecation") // RCVBUF_ALLOCATOR: 4.2 deprecates it without a replacement option
    private void socketOptions(Setter o, TcpSettings s) {
        o.set(ChannelOption.TCP_NODELAY, true);
        o.set(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(64, 2048, s.maxRead()));
        o.set(ChannelOption.SO_KEEPALIVE, true);
        int idle = (int) s.keepaliveIdle().toSeconds();
        int interval = (int) s.keepaliveInterval().toSeconds();
        if (epoll) {
            o.set(EpollChannelOption.TCP_KEEPIDLE, idle);
            o.set(EpollChannelOption.TCP_KEEPINTVL, interval);
            o.set(EpollChannelOption.TCP_KEEPCNT, s.keepaliveCount());
            if (!s.userTimeout().isZero()) {
                o.set(EpollChannelOption.TCP_USER_TIMEOUT, (int) Math.min(Integer.MAX_VALUE,
                        s.userTimeout().toMillis()));
            }
        } else {
            o.set(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE), idle);
            o.set(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL), interval);
            o.set(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT), s.keepaliveCount());
        }
    }
}
