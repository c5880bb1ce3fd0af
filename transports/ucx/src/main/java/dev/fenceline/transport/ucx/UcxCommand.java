package dev.fenceline.transport.ucx;

import java.util.UUID;

/**
 * What other threads hand the progress agent, the only thread that touches UCT: operations from the
 * endpoint actors' lanes, and decisions of the transport actor. They queue in one bounded
 * many-to-one queue and are carried out in order.
 */
sealed interface UcxCommand permits UcxOp, UcxCommand.Dial, UcxCommand.Abandon, UcxCommand.Tick,
        UcxCommand.PeerGone, UcxCommand.LaneEnded, UcxCommand.BreakChannel, UcxCommand.LaneOverflowed,
        UcxCommand.Replace, UcxCommand.HeartbeatProbe {
    /**
     * Connect to a peer worker: plan the lanes, set up channels, send the CONNECT.
     *
     * @param dial the connect's id
     * @param peer the peer worker
     * @param address its ucx address, decoded
     */
    record Dial(long dial, UUID peer, UcxAddress address) implements UcxCommand {
    }

    /**
     * A connect timed out: its lanes are let go, and a late answer finds nothing.
     *
     * @param dial the connect
     */
    record Abandon(long dial) implements UcxCommand {
    }

    /** The transport actor's periodic tick: greetings not yet answered are repeated. */
    enum Tick implements UcxCommand {
        /** The one instance. */
        TICK
    }

    /**
     * A peer process on this host is gone: its channels fail, its connections here are forgotten.
     *
     * @param peer the peer worker
     */
    record PeerGone(UUID peer) implements UcxCommand {
    }

    /**
     * The endpoint gave a lane up or closed it: the agent forgets it once it owes no answer, and
     * tells the target.
     *
     * @param lane the lane
     */
    record LaneEnded(UcxLane lane) implements UcxCommand {
    }

    /**
     * Fails a lane's channel as if UCT had reported its peer failed: fault injection, for tests of
     * what a transport failure does (the SPI contract suite's broken connection).
     *
     * @param lane a lane on the channel
     * @param cause the failure to report
     */
    record BreakChannel(UcxLane lane, Throwable cause) implements UcxCommand {
    }

    /**
     * A calling thread's posted operation was numbered and then refused by the agent's queue, which
     * other lanes had filled since it looked: the lane was marked failed there (so nothing posted
     * after it goes first) and gave its posted operations back; the agent reports the failure, so
     * that the endpoint takes them back and sends them again ({@link UcxLane#overflowed}).
     *
     * @param lane the lane
     * @param cause the failure to report
     */
    record LaneOverflowed(UcxLane lane, Throwable cause) implements UcxCommand {
    }

    /**
     * Puts a new connection behind a lane's slot ({@link UcxWiring#replace}).
     *
     * @param lane the lane
     */
    record Replace(UcxLane lane) implements UcxCommand {
    }

    /**
     * A keepalive probe of a lane to a peer on this host: answered once the peer's heartbeat in its
     * key table moves (its process runs, whatever its progress agent is doing).
     *
     * @param lane the lane
     * @param token the probe's token
     */
    record HeartbeatProbe(UcxLane lane, long token) implements UcxCommand {
    }
}
