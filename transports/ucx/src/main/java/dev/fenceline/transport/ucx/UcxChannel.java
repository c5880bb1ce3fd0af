package dev.fenceline.transport.ucx;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One UCT endpoint between this worker and a peer worker, on one of this worker's ifaces: an origin
 * channel carries this worker's requests (its lanes share it), a target channel the replies to a
 * peer's requests. A channel to the peer's iface may do both ({@link #bothWays}): the first worker
 * of a pair to connect dials it, and the other's lanes between the same two ifaces go on its end
 * of it ({@link UcxWireup.Mode#REVERSE}). Channels are made at wireup and live until their peer
 * fails or goes; progress agent only.
 */
final class UcxChannel {
    /** Where a channel stands. */
    enum State {
        /** Endpoint to endpoint, waiting for the peer's address or for the greeting's answer. */
        WIRING,
        /** Carries messages both ways. */
        READY,
        /** UCT reported the peer failed, or the peer went: nothing more goes on it. */
        FAILED
    }

    final long id;
    final UcxPeer peer;
    final UctIface iface;
    /** The iface's index in this worker's address. */
    final int ifaceIndex;
    /** The peer iface's index in its address. */
    final int peerIface;
    final UctEndpoint ep;
    final UcxWireup.Mode mode;
    /** Whether this worker dialed it (its id is this worker's), else the peer did. */
    final boolean origin;
    /**
     * Whether it carries both this worker's lanes and its replies to the peer's lanes: a channel
     * the peer dialed that this worker's lanes use too, or one this worker dialed that the peer's
     * lanes use too (their replies go on it). Its failure fails both.
     */
    boolean bothWays;
    /**
     * A channel the peer dialed that a refused connect named for this worker's lanes, before the
     * peer ever took it: it is never named so again (UCT does not say who sent a CONNECT, so a third
     * worker may have made it here in the peer's name).
     */
    boolean noReverse;
    State state;
    /** This worker's lanes on this channel (one it dialed, or one the peer dialed that carries both ways). */
    final List<UcxLane> lanes = new ArrayList<>();
    /**
     * A message that met NO_RESOURCE: its bytes, its UCT active-message id, and when it was kept
     * ({@code System.nanoTime()}), by which the channel whose oldest message waited longest is told.
     */
    record Waiting(byte[] bytes, int id, long since) {
    }

    /** Messages that met NO_RESOURCE, in order: nothing else is sent before them. */
    final ArrayDeque<Waiting> backlog = new ArrayDeque<>();
    /** The backlog's bytes (agent thread), bounded with its peer's other channels' ({@link UcxSender}). */
    long backlogBytes;
    /**
     * Run once the backlog has gone, or the channel failed first, or at {@link #afterBacklogBy}: a
     * refused connect's channels end then, so that the refusal waiting on one of them is not dropped
     * with it (agent thread).
     */
    Runnable afterBacklog;
    /** When {@link #afterBacklog} runs whether or not the backlog has gone ({@code System.nanoTime()}). */
    long afterBacklogBy;
    /**
     * Made for a connect that was refused: no later connect may name it (it ends soon, without a
     * warning), and the refusal on it never makes another channel fail for room ({@link UcxSender}).
     */
    boolean refused;
    /** Whether a pending request waits for room on the endpoint. */
    boolean pendingAdded;
    /** Greetings sent without an answer (endpoint-to-endpoint channels while wiring). */
    int hellos;
    /** Hardware operations handed to UCT on its endpoint and not complete (agent thread). */
    int hardwareInFlight;
    /** It failed while UCT still held transfers naming its endpoint: the endpoint goes with the last. */
    boolean destroyWhenIdle;
    /**
     * UCT failed its endpoint (it reported the peer failed, or a flush completed with an error):
     * a UCT flush of it is not believed (agent thread).
     */
    boolean uctFailed;
    /** The longest message that goes as a short active message (its first 8 bytes as UCT's header); 0: none. */
    final int amShortMax;
    /**
     * The longest message it carries in one active message (bcopy, else short): a reply to a get must
     * fit, since UCT refuses a longer one with an error that fails the channel.
     */
    final int amMax;

    UcxChannel(long id, UcxPeer peer, UctIface iface, int ifaceIndex, int peerIface, UctEndpoint ep,
            UcxWireup.Mode mode, boolean origin, State state) {
        this.id = id;
        this.peer = peer;
        this.iface = iface;
        this.ifaceIndex = ifaceIndex;
        this.peerIface = peerIface;
        this.ep = ep;
        this.mode = mode;
        this.origin = origin;
        this.state = state;
        UctIfaceAttributes a = iface.attributes();
        this.amShortMax = a.has(UctIfaceAttributes.AM_SHORT) ? (int) Math.min(a.amMaxShort(), Integer.MAX_VALUE) : 0;
        this.amMax = a.has(UctIfaceAttributes.AM_BCOPY) ? (int) Math.min(a.amMaxBcopy(), Integer.MAX_VALUE)
                : amShortMax;
    }

    boolean ready() {
        return state == State.READY;
    }

    /**
     * Agent thread, as the channel fails: its endpoint goes now, unless UCT still holds transfers
     * that name it (a cma copy under way): destroyed then, UCX would run them on freed memory. They
     * may still land, so their completions answer them (UcxLaneLedger#revoke holds them), and the
     * endpoint goes with the last ({@link #hardwareCompleted}).
     */
    void closeEndpointWhenIdle() {
        if (hardwareInFlight == 0) {
            ep.close();
        } else {
            destroyWhenIdle = true;
        }
    }

    /** Agent thread: a hardware operation on it completed; a failed channel's endpoint goes with its last. */
    void hardwareCompleted() {
        if (--hardwareInFlight == 0 && destroyWhenIdle) {
            destroyWhenIdle = false;
            ep.close();
        }
    }

    boolean blocked() {
        return !backlog.isEmpty();
    }

    @Override
    public String toString() {
        return (bothWays ? "two-way channel " : origin ? "channel " : "reply channel ") + Long.toHexString(id) + " on "
                + iface + " to " + peer;
    }
}
