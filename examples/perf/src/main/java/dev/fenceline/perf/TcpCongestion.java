package dev.fenceline.perf;

import com.typesafe.config.Config;
import io.netty.channel.Channel;
import io.netty.channel.unix.RawUnixChannelOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The TCP congestion control of a run's tcp sockets: the tcp transport's {@code congestion-control}
 * for its lanes, the same for the raw Netty baseline beside them, and what a run's header names. It
 * moves the large-put rows by some 40 % (docs/performance.md). The transport's own setter is private
 * to its module; this one sets only the baseline's sockets.
 */
final class TcpCongestion {
    static final String KEY = "fenceline.transport.tcp.congestion-control";
    private static final int IPPROTO_TCP = 6;
    private static final int TCP_CONGESTION = 13;

    private TcpCongestion() {
    }

    /**
     * @param config the run's configuration
     * @param transport the run's transport
     * @return what the baseline's sockets take: the tcp transport's setting beside the tcp transport
     *     (UCT's own sockets take none), else empty for the kernel's default
     */
    static String forBaseline(Config config, String transport) {
        return transport.equals("tcp") && config.hasPath(KEY) ? config.getString(KEY) : "";
    }

    /**
     * Only this host's: with --connect the server's sockets follow its own setting.
     *
     * @param config the run's configuration
     * @return the configured one, or this host's kernel's default, so marked
     */
    static String shown(Config config) {
        String configured = config.hasPath(KEY) ? config.getString(KEY) : "";
        if (!configured.isEmpty()) {
            return configured;
        }
        String kernel = kernelDefault();
        return kernel == null ? "this host's kernel's" : kernel + " (this host's kernel's)";
    }

    /**
     * @param configured a configured congestion control, or empty for the kernel's default
     * @return the one this host's sockets run under: the configured one, else the kernel's default
     *     ({@code "unknown"} where it cannot be read)
     */
    static String effective(String configured) {
        if (!configured.isEmpty()) {
            return configured;
        }
        String kernel = kernelDefault();
        return kernel == null ? "unknown" : kernel;
    }

    /** @return this host's kernel's default, or null where it cannot be read (not Linux, say) */
    private static String kernelDefault() {
        try {
            String name = Files.readString(Path.of("/proc/sys/net/ipv4/tcp_congestion_control")).trim();
            return name.isEmpty() ? null : name;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Sets a socket's congestion control, with a buffer of its own (the setting consumes it).
     *
     * @param ch an epoll channel
     * @param name the name's bytes
     * @throws IllegalStateException if the channel takes no raw socket options
     */
    static void set(Channel ch, byte[] name) {
        if (!ch.config().setOption(new RawUnixChannelOption("TCP_CONGESTION", IPPROTO_TCP, TCP_CONGESTION,
                name.length), ByteBuffer.wrap(name))) {
            throw new IllegalStateException(ch.getClass().getSimpleName() + " takes no raw socket options");
        }
    }
}
