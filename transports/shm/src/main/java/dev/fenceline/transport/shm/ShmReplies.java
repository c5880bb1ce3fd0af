package dev.fenceline.transport.shm;

import java.util.function.Consumer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The target's answers into its peers' inboxes, in order, on the polling thread: into the ring
 * while it has room, else into that inbox's backlog (and sent from there as room comes), up to
 * {@code max-backlog}. What happens past that bound is the target's to decide.
 */
final class ShmReplies {
    /** Writes a reply's body at an offset of a buffer. */
    @FunctionalInterface
    interface Writer {
        void write(AtomicBuffer b, int at);
    }

    private final long maxBacklog;
    private final Consumer<String> dropped;

    /**
     * @param maxBacklog the most bytes of answers held for one inbox
     * @param dropped told of each reply a peer's ring lost, in words
     */
    ShmReplies(long maxBacklog, Consumer<String> dropped) {
        this.maxBacklog = maxBacklog;
        this.dropped = dropped;
    }

    /**
     * Writes one reply into {@code to}'s inbox, or into its backlog if the ring is full (or others
     * wait there). Every reply fits the ring's largest message: the ring is at least
     * {@link ShmSettings#MIN_RING_SIZE} and a get's data is bounded by it.
     *
     * @return false if holding it would pass max-backlog: nothing was written
     */
    boolean reply(Inbox to, int type, int length, Writer w) {
        if (to.backlog.isEmpty()) {
            int at = to.ring.tryClaim(type, ShmWire.claimLength(type, length));
            if (at >= 0) {
                w.write(to.ring.buffer(), at);
                commit(to, at, type);
                to.doorbell.ring();
                return true;
            }
        }
        if (to.backlogBytes + length > maxBacklog) {
            return false;
        }
        byte[] copy = new byte[length];
        w.write(new UnsafeBuffer(copy), 0);
        backlog(to, type, copy);
        return true;
    }

    /** Empties {@code to}'s backlog but for RESETs still waiting there: those connections must hear it. */
    static void dropAnswers(Inbox to) {
        int n = to.backlog.size();
        to.backlogBytes = 0;
        to.resetsOwed = 0; // counted again as they are kept
        for (int i = 0; i < n; i++) {
            byte[] m = to.backlog.pollFirst();
            int type = to.backlogTypes.pollFirst();
            if (type == ShmWire.RESET) {
                backlog(to, type, m);
            }
        }
    }

    /** Holds {@code message} at the end of {@code to}'s backlog. */
    static void backlog(Inbox to, int type, byte[] message) {
        to.backlog.add(message);
        to.backlogTypes.add(type);
        to.backlogBytes += message.length;
        if (type == ShmWire.RESET) {
            to.resetsOwed++;
        }
    }

    /** Sends what waited for room in {@code to}'s ring; @return how many */
    int drain(Inbox to) {
        int sent = 0;
        while (!to.backlog.isEmpty()) {
            byte[] m = to.backlog.peekFirst();
            int at = to.ring.tryClaim(to.backlogTypes.peekFirst(), ShmWire.claimLength(to.backlogTypes.peekFirst(),
                    m.length)); // the rest of the line is the ring's zeros
            if (at < 0) {
                break;
            }
            to.ring.buffer().putBytes(at, m);
            commit(to, at, to.backlogTypes.peekFirst());
            to.backlog.pollFirst();
            if (to.backlogTypes.pollFirst() == ShmWire.RESET) {
                to.resetsOwed--;
            }
            to.backlogBytes -= m.length;
            sent++;
        }
        if (sent > 0) {
            to.doorbell.ring();
        }
        return sent;
    }

    /**
     * Commits a reply claimed in a peer's ring. The peer may have changed the claimed record's
     * header meanwhile (its ring is its memory; an honest one does so only when it took this
     * process for dead): Agrona then refuses the commit, and the reply is lost to that peer alone.
     */
    private void commit(Inbox to, int at, int type) {
        try {
            to.ring.commit(at);
        } catch (IllegalStateException e) {
            dropped.accept("a " + ShmWire.name(type) + " for " + to.name + ", whose ring lost the record claimed for it ("
                    + e.getMessage() + ")");
        }
    }
}
