package dev.fenceline.transport.tcp;

import dev.fenceline.spi.LaneListener;
import java.net.InetSocketAddress;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One network path to a peer (a local/remote address pair) and the lane on it. When the lane's
 * connection dies, the rail reconnects with exponential backoff and hands the endpoint the new
 * connection as a recovered lane; it stops when the endpoint closes the lane, when the transport
 * closes, or after {@code reconnect.give-up-after}.
 */
final class Rail {
    private static final Logger LOG = LoggerFactory.getLogger(Rail.class);
    /** A connection that lived this long was not flapping. */

    private final TcpTransport transport;
    private final int index;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final UUID peer;
    private TcpLane current;
    private LaneListener listener;
    private boolean stopped;
    private boolean reconnecting;
    private long failedAt;
    private long backoffNanos;
    private long connectedAt = System.nanoTime();

    /**
     * @param local the local address to connect from, or null to let the kernel choose
     */
    Rail(TcpTransport transport, int index, InetSocketAddress local, InetSocketAddress remote, UUID peer) {
        this.transport = transport;
        this.index = index;
        this.local = local;
        this.remote = remote;
        this.peer = peer;
    }

    UUID peer() {
        return peer;
    }

    InetSocketAddress local() {
        return local;
    }

    InetSocketAddress remote() {
        return remote;
    }

    synchronized void attached(TcpLane lane) {
        current = lane;
        connectedAt = System.nanoTime();
    }

    /** The endpoint closed {@code lane}: it wants nothing more from this rail. */
    void stop(TcpLane lane) {
        synchronized (this) {
            if (lane != current) {
                return;
            }
            stopped = true;
        }
        transport.forget(this);
    }

    synchronized boolean stopped() {
        return stopped;
    }

    /** Closes the rail for good (the transport is closing). */
    synchronized void shutdown() {
        stopped = true;
    }

    /** {@code lane} died (or the endpoint gave up on it) but is still wanted: reconnect. */
    void lost(TcpLane lane, LaneListener l, Throwable cause) {
        synchronized (this) {
            if (stopped || lane != current || reconnecting || l == null) {
                return;
            }
            reconnecting = true;
            listener = l;
            long now = System.nanoTime();
            // A connection that died soon after it came up (a flapping path, a peer that kills it at
            // once) keeps the backoff and the give-up clock of the failure before it.
            boolean flapping = backoffNanos > 0 && now - connectedAt < transport.settings().stableAfter().toNanos();
            if (!flapping) {
                failedAt = now;
                backoffNanos = transport.settings().minBackoff().toNanos();
            }
        }
        LOG.info("tcp {}: rail {} ({} -> {}) lost: {}; reconnecting", transport.workerName(), index, local, remote,
                cause.toString());
        schedule();
    }

    private void schedule() {
        long delay;
        synchronized (this) {
            // Jitter: endpoints that lost the same path do not reconnect in lockstep.
            delay = backoffNanos / 2 + java.util.concurrent.ThreadLocalRandom.current().nextLong(backoffNanos / 2 + 1);
        }
        if (!transport.schedule(this::attempt, delay, TimeUnit.NANOSECONDS)) {
            shutdown();
        }
    }

    private void attempt() {
        if (stopped()) {
            return;
        }
        transport.open(this).whenComplete((lane, error) -> {
            if (error != null) {
                retryOrGiveUp(error);
                return;
            }
            LaneListener l;
            synchronized (this) {
                if (stopped) {
                    l = null;
                } else {
                    current = lane;
                    reconnecting = false;
                    l = listener;
                }
            }
            if (l == null) {
                lane.close();
                return;
            }
            LOG.info("tcp {}: rail {} ({} -> {}) reconnected", transport.workerName(), index, local, remote);
            l.onRecovered(lane);
        });
    }

    private void retryOrGiveUp(Throwable error) {
        long giveUp = transport.settings().giveUpAfter().toNanos();
        synchronized (this) {
            if (stopped) {
                return;
            }
            boolean refused = error instanceof LaneHandler.RefusedException
                    || error.getCause() instanceof LaneHandler.RefusedException;
            if (refused || System.nanoTime() - failedAt > giveUp) {
                stopped = true;
                LOG.warn("tcp {}: rail {} ({} -> {}) stops reconnecting{}: {}", transport.workerName(), index, local,
                        remote, refused ? " (the peer refused us; retrying cannot help)" : " after "
                                + transport.settings().giveUpAfter(), error.toString());
            } else {
                backoffNanos = Math.min(backoffNanos * 2, transport.settings().maxBackoff().toNanos());
            }
        }
        if (stopped()) {
            transport.forget(this);
            return;
        }
        LOG.debug("tcp {}: rail {} reconnect failed: {}", transport.workerName(), index, error.toString());
        schedule();
    }
}
