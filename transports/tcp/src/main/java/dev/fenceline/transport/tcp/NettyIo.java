package dev.fenceline.transport.tcp;

import dev.fenceline.ConfigurationException;
import io.netty.bootstrap.AbstractBootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelException;
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
import io.netty.channel.unix.RawUnixChannelOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.net.ExtendedSocketOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Native epoll where it is available (or required), NIO otherwise; and the socket options of each. */
record NettyIo(boolean epoll, IoHandlerFactory handlers, Class<? extends SocketChannel> channel,
        Class<? extends ServerSocketChannel> serverChannel) {
    private static final Logger LOG = LoggerFactory.getLogger(NettyIo.class);
    private static final AtomicBoolean FALLBACK_LOGGED = new AtomicBoolean();
    /** Where Linux lists the congestion controls its TCP has (loaded or built in). */
    static final String AVAILABLE_CONGESTION_CONTROL = "/proc/sys/net/ipv4/tcp_available_congestion_control";
    /** Those an unprivileged process may choose. */
    private static final String ALLOWED_CONGESTION_CONTROL = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
    private static final String CONGESTION_KEY = TcpSettings.SECTION + ".congestion-control";
    private static final int IPPROTO_TCP = 6;
    private static final int TCP_CONGESTION = 13;
    /** The kernel's longest name of a congestion control, its NUL included (TCP_CA_NAME_MAX). */
    private static final int CONGESTION_NAME_MAX = 16;

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

    /**
     * Checks, at the transport's start, that every lane's socket can take the configured congestion
     * control: the kernel is asked on a socket opened for the purpose, so that a name it does not
     * have, or one this process may not choose, is a configuration error naming the key, not a
     * warning per connection.
     *
     * @param name the congestion control, empty for the kernel's default (then nothing is checked)
     * @param io the {@code io} setting this choice was made from, to say why NIO cannot take it
     * @throws ConfigurationException if it cannot be set
     */
    void checkCongestionControl(String name, String io) {
        if (name.isEmpty()) {
            return;
        }
        if (!epoll) {
            throw new ConfigurationException(CONGESTION_KEY + " = " + name + " is invalid here: only native epoll"
                    + " sets a socket's congestion control, and this transport runs on NIO ("
                    + (io.equals("nio") ? "io = nio" : "io = " + io + ", and native epoll is unavailable: "
                            + Epoll.unavailabilityCause()) + ")");
        }
        EpollSocketChannel probe = null;
        try {
            probe = new EpollSocketChannel();
            setCongestionControl(probe, name);
        } catch (ChannelException e) {
            throw new ConfigurationException(CONGESTION_KEY + " = " + name + " is invalid: the kernel refused it ("
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()) + "); available: "
                    + firstLine(AVAILABLE_CONGESTION_CONTROL) + "; allowed without CAP_NET_ADMIN: "
                    + firstLine(ALLOWED_CONGESTION_CONTROL), e);
        } finally {
            if (probe != null) {
                probe.unsafe().closeForcibly();
            }
        }
    }

    /**
     * Sets a lane socket's congestion control, on epoll (from its channel's initializer: a value of a
     * bootstrap's options would be one buffer for all its channels, and the setting consumes it).
     *
     * @param ch a lane's channel
     * @param name the congestion control, empty for the kernel's default (then nothing is set)
     * @throws ChannelException naming the key, if the kernel refuses it (it took it at the start:
     *     chiefly a change to the kernel's lists since, or a route that locks its own, makes it refuse)
     */
    void congestionControl(Channel ch, String name) {
        if (epoll && !name.isEmpty()) {
            try {
                setCongestionControl(ch, name);
            } catch (ChannelException e) {
                throw new ChannelException(CONGESTION_KEY + " = " + name + ": the kernel refused it on " + ch
                        + " (it took it as the transport started)", e);
            }
        }
    }

    private static void setCongestionControl(Channel ch, String name) {
        byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        if (!ch.config().setOption(new RawUnixChannelOption("TCP_CONGESTION", IPPROTO_TCP, TCP_CONGESTION,
                bytes.length), ByteBuffer.wrap(bytes))) {
            throw new ChannelException(ch.getClass().getSimpleName() + " takes no raw socket options");
        }
    }

    /**
     * @param ch an epoll channel
     * @return the congestion control its socket has (tests)
     */
    static String congestionControlOf(Channel ch) {
        ByteBuffer b = ch.config().getOption(new RawUnixChannelOption("TCP_CONGESTION", IPPROTO_TCP, TCP_CONGESTION,
                CONGESTION_NAME_MAX));
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.US_ASCII);
    }

    private static String firstLine(String file) {
        try {
            List<String> lines = Files.readAllLines(Path.of(file));
            return lines.isEmpty() ? "?" : lines.get(0).trim();
        } catch (IOException | RuntimeException e) {
            return "? (" + file + " unreadable)";
        }
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
