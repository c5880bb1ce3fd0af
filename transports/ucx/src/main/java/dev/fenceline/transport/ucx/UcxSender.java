package dev.fenceline.transport.ucx;

import java.util.ArrayList;
import java.util.List;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Sends the transport's active messages on channels (progress agent only). A message UCT has no
 * room for waits in its channel's backlog, in order, and a UCT pending request says when to try
 * again; nothing else goes on the channel before it. Requests of lanes do not go to the backlog:
 * their lane keeps them queued ({@link #trySend} says no), so a lane never has a request stuck
 * behind memory it does not own.
 */
final class UcxSender {
    /** What a send came to. */
    enum Sent {
        /** UCT took it. */
        SENT,
        /** No room now: try again when the channel is ready. */
        NO_ROOM,
        /** The channel failed. */
        FAILED
    }

    /**
     * The most bytes of replies and wireup the channels to one peer keep waiting for room: a peer
     * that sends requests and leaves the answers unread (a get's answer is far bigger than the get)
     * would otherwise make this worker hold them without end. Past it the peer's channel whose oldest
     * waiting message waited longest fails: the peer's lanes on it get no more answers, and fail by
     * keepalive (this worker's own channels to the peer, whose wireup waits there too, fail their
     * lanes at once). As tcp's {@code limits.queued-bytes}.
     */
    static final long MAX_BACKLOG_BYTES = 32L << 20;
    /**
     * The most bytes all channels keep waiting for room: a peer is a worker id its CONNECT states,
     * so ids made up bound nothing alone. Past it the channel whose oldest waiting message waited
     * longest fails: channels that never drain, or take a message now and then, make room for those
     * that keep draining.
     */
    static final long MAX_TOTAL_BACKLOG_BYTES = 256L << 20;

    /** Told when a channel fails on a send. */
    interface Failures {
        /**
         * @param channel the channel
         * @param why what UCT returned, or what else failed it
         */
        void failed(UcxChannel channel, String why);
    }

    private final Failures failures;
    /** Channels with something in their backlog, or waiting for room. */
    private final List<UcxChannel> blocked = new ArrayList<>();
    private final long maxPerPeer;
    private final long maxTotal;
    /** The bytes of all backlogs. */
    private long backlogBytes;

    UcxSender(Failures failures) {
        this(failures, MAX_BACKLOG_BYTES, MAX_TOTAL_BACKLOG_BYTES);
    }

    /**
     * @param failures told when a channel fails on a send
     * @param maxPerPeer the most bytes the backlogs of one peer's channels keep
     * @param maxTotal the most bytes all backlogs keep
     */
    UcxSender(Failures failures, long maxPerPeer, long maxTotal) {
        this.failures = failures;
        this.maxPerPeer = maxPerPeer;
        this.maxTotal = maxTotal;
    }

    /**
     * Sends a message, or keeps a copy in the channel's backlog if UCT has no room: for replies and
     * wireup, which nobody else keeps.
     *
     * @param channel the channel
     * @param id the UCT active-message id
     * @param message the bytes (from position 0)
     * @param length how many
     */
    void send(UcxChannel channel, int id, UnsafeBuffer message, int length) {
        send(channel, id, message, length, true);
    }

    /**
     * @param mayEvict whether, past a bound, another channel may fail to make room for it (not for
     *     a refusal to a connect, which must not cost a connected peer its channel)
     */
    void send(UcxChannel channel, int id, UnsafeBuffer message, int length, boolean mayEvict) {
        if (channel.state == UcxChannel.State.FAILED) {
            return; // its peer learns nothing more from this worker on it
        }
        if (!channel.blocked()) {
            Sent s = trySend(channel, id, message, length);
            if (s != Sent.NO_ROOM) {
                return;
            }
        }
        if (!makeRoom(channel, length, mayEvict)) {
            return;
        }
        byte[] copy = new byte[length];
        message.getBytes(0, copy);
        channel.backlog.add(new UcxChannel.Waiting(copy, id, System.nanoTime()));
        added(channel, length);
        block(channel);
    }

    /**
     * Makes room within one peer's bound and all channels' for a message to keep on {@code channel}:
     * failed channels let go of theirs, and while that is not enough the channel (of that peer, or
     * any) whose oldest waiting message waited longest fails: this one, if that is its message or it
     * may not make others fail.
     *
     * @return false if {@code channel} failed
     */
    private boolean makeRoom(UcxChannel channel, int length, boolean mayEvict) {
        while (channel.peer.backlogBytes + length > maxPerPeer) {
            if (!evict(channel, length, mayEvict, channel.peer)) {
                return false;
            }
        }
        while (backlogBytes + length > maxTotal) {
            if (!evict(channel, length, mayEvict, null)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Fails the channel, of {@code peer} or of any peer if null, whose oldest waiting message waited
     * longest; or first lets go of failed channels' backlogs, if there are any.
     *
     * @return false if that is {@code channel}
     */
    private boolean evict(UcxChannel channel, int length, boolean mayEvict, UcxPeer peer) {
        long now = System.nanoTime();
        UcxChannel victim = channel;
        long since = channel.backlog.isEmpty() ? now : channel.backlog.peekFirst().since();
        boolean dropped = false;
        for (UcxChannel c : blocked) {
            if (c.state == UcxChannel.State.FAILED) {
                dropped |= c.backlogBytes > 0;
                drop(c); // failed since the last pass: its messages will never go
            } else if (mayEvict && c != channel && !c.backlog.isEmpty() && (peer == null || c.peer == peer)
                    && (c.backlog.peekFirst().since() - since < 0 || victim.backlog.isEmpty())) {
                victim = c;
                since = c.backlog.peekFirst().since();
            }
        }
        if (dropped) {
            return true; // look again: that may be room enough
        }
        String why = why(channel, victim, length, mayEvict, peer, (now - since) / 1_000_000);
        if (victim == channel) {
            failures.failed(channel, why);
            return false;
        }
        drop(victim); // its room goes now: the failure may send on other channels
        failures.failed(victim, why);
        return true;
    }

    /** Why {@code victim} fails to make room for a message on {@code channel}: true in every case. */
    private String why(UcxChannel channel, UcxChannel victim, int length, boolean mayEvict, UcxPeer peer,
            long waitedMillis) {
        String whose = peer == null ? "all channels" : "the channels to " + peer;
        String past = (peer == null ? backlogBytes : peer.backlogBytes) + " bytes wait for room on " + whose + ", and "
                + length + " more would pass the bound of " + (peer == null ? maxTotal : maxPerPeer);
        if (victim.backlog.isEmpty()) { // the channel the message is for, holding nothing
            return past + (mayEvict ? "; none of them on this channel" : "; a refusal to a connect makes no other"
                    + " channel fail");
        }
        return past + "; " + victim.backlogBytes + " of them on this channel, the oldest waiting " + waitedMillis
                + " ms" + (mayEvict || victim != channel ? ", longer than on any other of " + whose : "")
                + (victim.origin && !victim.bothWays ? "" : " (its peer sends requests and does not take the answers)");
    }

    private void added(UcxChannel c, long n) {
        c.backlogBytes += n;
        c.peer.backlogBytes += n;
        backlogBytes += n;
    }

    /** Lets go of a channel's backlog: it failed, or ends now (its messages will never go). */
    private void drop(UcxChannel c) {
        added(c, -c.backlogBytes);
        c.backlog.clear();
    }

    /** @return the bytes of all backlogs */
    long backlogBytes() {
        return backlogBytes;
    }

    /**
     * Sends a message only if it can go now.
     *
     * @param channel the channel
     * @param id the UCT active-message id
     * @param message the bytes (from position 0)
     * @param length how many
     * @return what became of it
     */
    Sent trySend(UcxChannel channel, int id, UnsafeBuffer message, int length) {
        return trySend(channel, id, message, length, 0, 0);
    }

    /**
     * Sends a message of two pieces only if it can go now: {@code message}'s first {@code length}
     * bytes, then {@code tailLength} bytes of native memory at {@code tail} (a put's payload, copied
     * once, straight into UCT's buffer).
     *
     * @param tail the second piece's address, or 0 for none
     * @param tailLength its bytes
     * @return what became of it
     */
    Sent trySend(UcxChannel channel, int id, UnsafeBuffer message, int length, long tail, int tailLength) {
        if (channel.state == UcxChannel.State.FAILED) {
            return Sent.FAILED;
        }
        if (channel.blocked()) {
            return Sent.NO_ROOM;
        }
        // A message that fits goes short: UCT writes it straight into the transport's buffer, without
        // the pack callback's copy (its first 8 bytes are UCT's header and arrive first, so the peer
        // reads the same bytes either way).
        int s = tail != 0 ? channel.ep.activeMessageCopy(id, message.addressOffset(), length, tail, tailLength)
                : length >= 8 && length <= channel.amShortMax
                ? channel.ep.activeMessageShort(id, message.getLong(0), message.addressOffset() + 8, length - 8)
                : channel.ep.activeMessageCopy(id, message.addressOffset(), length);
        if (s == UctStatus.OK) {
            return Sent.SENT;
        }
        if (s == UctStatus.NO_RESOURCE) {
            block(channel);
            return Sent.NO_ROOM;
        }
        failures.failed(channel, UctStatus.describe(s));
        return Sent.FAILED;
    }

    /**
     * UCT had no room for a lane's operation on the channel: the lane waits until it has.
     *
     * @param channel the channel
     */
    void noRoom(UcxChannel channel) {
        block(channel);
    }

    /** Asks UCT to say when the channel has room (once). */
    private void block(UcxChannel channel) {
        if (!blocked.contains(channel)) {
            blocked.add(channel);
        }
        if (!channel.pendingAdded) {
            int s = channel.ep.pending(channel.ep.handle);
            if (s == UctStatus.OK) {
                channel.pendingAdded = true;
            }
            // BUSY: room already; the next pass tries again. Anything else: the channel is failing,
            // and its error event comes.
        }
    }

    /**
     * A pending request fired, or a pass goes by: drains the backlogs that can go now. A channel
     * with something to run once its backlog has gone ({@link UcxChannel#afterBacklog}) runs it when
     * the backlog has gone, when the channel failed, or at its deadline, and is not returned.
     *
     * @return the channels that have room again (their lanes may send), possibly empty
     */
    List<UcxChannel> retry() {
        if (blocked.isEmpty()) {
            return List.of();
        }
        List<UcxChannel> freed = null;
        for (int i = 0; i < blocked.size();) {
            UcxChannel c = blocked.get(i);
            if (c.state == UcxChannel.State.FAILED
                    || c.afterBacklog != null && System.nanoTime() - c.afterBacklogBy > 0) {
                blocked.remove(i); // failed, or what waited on it has waited long enough: it ends
                drop(c);
                backlogGone(c);
                continue;
            }
            if (c.pendingAdded) {
                i++; // its ready event has not come: UCT has no room yet
                continue;
            }
            boolean stuck = false;
            while (!c.backlog.isEmpty()) {
                UcxChannel.Waiting m = c.backlog.peekFirst();
                int s = withBuffer(m.bytes(), address -> c.ep.activeMessageCopy(m.id(), address, m.bytes().length));
                if (s == UctStatus.NO_RESOURCE) {
                    stuck = true;
                    break;
                }
                c.backlog.pollFirst();
                added(c, -m.bytes().length);
                if (s != UctStatus.OK) {
                    failures.failed(c, UctStatus.describe(s));
                    stuck = true;
                    break;
                }
            }
            if (c.state == UcxChannel.State.FAILED) {
                blocked.remove(i); // a send failed it: what still waited will never go
                drop(c);
                backlogGone(c);
                continue;
            }
            if (stuck) {
                block(c);
                i++;
                continue;
            }
            blocked.remove(i);
            if (backlogGone(c)) {
                continue; // it ends now: nothing more goes on it
            }
            if (freed == null) {
                freed = new ArrayList<>();
            }
            freed.add(c);
        }
        return freed == null ? List.of() : freed;
    }

    /** @return whether the channel had something to run once its backlog was gone (it ran) */
    private static boolean backlogGone(UcxChannel c) {
        Runnable r = c.afterBacklog;
        if (r == null) {
            return false;
        }
        c.afterBacklog = null;
        r.run();
        return true;
    }

    /** A scratch buffer for backlog messages, grown to the largest. */
    private java.nio.ByteBuffer scratch = java.nio.ByteBuffer.allocateDirect(256);

    private int withBuffer(byte[] m, java.util.function.LongToIntFunction send) {
        if (scratch.capacity() < m.length) {
            scratch = java.nio.ByteBuffer.allocateDirect(m.length);
        }
        scratch.clear();
        scratch.put(m);
        return send.applyAsInt(BufferUtil.address(scratch));
    }

    /** The channel's pending request fired: UCT has room on it. */
    void ready(UcxChannel channel) {
        channel.pendingAdded = false;
    }

    /** @return whether some channel waits */
    boolean anyBlocked() {
        return !blocked.isEmpty();
    }
}
