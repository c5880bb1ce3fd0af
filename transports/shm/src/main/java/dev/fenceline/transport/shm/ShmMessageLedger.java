package dev.fenceline.transport.shm;

import dev.fenceline.spi.Revocation;
import java.nio.ByteBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayQueue;
import org.agrona.collections.LongHashSet;
import org.agrona.concurrent.AtomicBuffer;

/**
 * What a {@link ShmLane} remembers of its ring messages: the tokens claimed and not yet answered,
 * in claim order (the peer answers in that order; a direct active message's token is negative),
 * which of them are gets (with the user's buffer their answer writes into) or active messages, and,
 * once the endpoint gave the lane up and revoked its gate, which answers the endpoint still waits
 * for. Pure bookkeeping: the lane claims, writes and commits records and calls out to its listener
 * and its direct answers; the ledger only says what the record implies, which keeps that logic
 * testable apart from rings and peers.
 *
 * <p>The ledger is the lane's lock, and takes no lock of its own: call every method while holding
 * its monitor ({@code synchronized (ledger)}). The lane holds it across a claim, the record's write
 * and its commit, so that a message is either claimed and remembered before the lane is revoked
 * (and then answered, or its fate known), or refused. The only read without it is the lane's of
 * {@link #revoked()} after an answer and on a failure. Tables are made at first use: a worker may
 * hold ten thousand idle lanes.
 */
final class ShmMessageLedger {
    /** The tokens of ring messages claimed and not yet answered, in claim order. */
    private LongArrayQueue posted; // made at the first message
    /** Answers taken so far (the peer answers in claim order). */
    private long answeredCount;
    /**
     * The endpoint gave the lane up and asked what became of its messages. Volatile: the lane reads it
     * without the monitor after an answer and on a failure, on threads other than the revoking one.
     */
    private volatile boolean revoked;
    // The sets only a lane's end fills are created then (null until): a worker holds thousands of lanes.
    /** Tokens the peer took before the revocation, whose answers the endpoint still waits for. */
    private LongHashSet held;
    /** See {@link #markAnswersLost}. */
    private boolean answersLost;
    /** Tokens the lane took while it was no longer live, and never sent. */
    private LongHashSet neverSent;
    /** Tokens of gets sent and not answered (their buffers may be let go at the give-up). */
    private LongHashSet getTokens;
    /** Tokens of active messages sent through the actor and not answered. */
    private LongHashSet amTokens;
    /** Gets whose answer came after the lane was given up, and went nowhere. */
    private LongHashSet droppedGets;
    /** Direct active messages queued and not yet answered. */
    private int directUnanswered;
    /** The endpoint gave the lane up while answers were owed; close after them. */
    private boolean closeWhenAnswered;
    /** The user's buffers of gets sent and not answered, by token; null until the first. */
    private Long2ObjectHashMap<ByteBuffer> gets;

    /**
     * What the revocation found became of the lane's unanswered messages. As a {@link Revocation}:
     * each endpoint token's fate (one in neither set was taken, or answered already).
     *
     * @param notTaken tokens the peer never took and never will (or that were never sent)
     * @param stopped tokens the peer took and will not answer, and gets whose answer went nowhere
     * @param directNotTaken direct active messages the peer never took
     * @param directStopped direct active messages the peer took and will not answer
     */
    record Fates(LongHashSet notTaken, LongHashSet stopped, int directNotTaken, int directStopped)
            implements Revocation {
        @Override
        public Fate fate(long token) {
            return notTaken.contains(token) ? Fate.REVOKED
                    : stopped.contains(token) ? Fate.STOPPED
                    : Fate.ANSWER_FOLLOWS; // taken, or answered already
        }
    }

    /** @return {@link #posted}, made if need be */
    private LongArrayQueue posted() {
        if (posted == null) {
            posted = new LongArrayQueue(Long.MAX_VALUE);
        }
        return posted;
    }

    /** @return whether the endpoint revoked the lane */
    boolean revoked() {
        return revoked;
    }

    /** A ring message was committed: its answer is the next after those already posted. */
    void posted(long token) {
        posted().addLong(token);
    }

    /** A direct active message was committed (its token is negative): one more such answer owed. */
    void postedDirect(long token) {
        posted().addLong(token);
        directUnanswered++;
    }

    /** An operation the lane took but never sent: it was no longer live, or the peer skipped the record. */
    void neverSent(long token) {
        neverSent = added(neverSent, token);
    }

    /** An active message is being written (before its body): a handler may take any time to answer it. */
    void activeMessageSent(long token) {
        amTokens = added(amTokens, token);
    }

    /** A get was written: its answer writes into {@code dst}. */
    void getSent(long token, ByteBuffer dst) {
        if (gets == null) {
            gets = new Long2ObjectHashMap<>();
        }
        gets.put(token, dst);
        getTokens = added(getTokens, token);
    }

    /**
     * Writing the record failed and its claim was aborted: forgets what {@link #getSent} or
     * {@link #activeMessageSent} noted.
     */
    void writeFailed(long token) {
        if (gets != null) {
            gets.remove(token);
        }
        remove(getTokens, token);
        remove(amTokens, token);
    }

    /** @return whether {@code token} is a get still unanswered */
    boolean isGet(long token) {
        return contains(getTokens, token);
    }

    /** What {@link #take} found: out of order (nothing changed; the lane fails). */
    static final int OUT_OF_ORDER = 0;
    /** ... of the wrong kind for its message (nothing changed; the lane fails). */
    static final int WRONG_KIND = 1;
    /** ... in order, and nothing to report (abandoned or given up first). */
    static final int NOTHING = 2;
    /** ... in order, a direct active message's, to report to its ledger. */
    static final int DIRECT = 3;
    /** ... in order, for the endpoint (a get's data copied into its buffer). */
    static final int DELIVER = 4;
    /** ... in order, a get's data of the wrong length (not copied; the lane fails). */
    static final int BAD_LENGTH = 5;

    /** The length the get answered {@link #BAD_LENGTH} asked for. */
    private int askedLength;

    /**
     * An answer came (the caller holds the lane's lock): checked against the message it answers and
     * taken; a get's data is copied into its buffer here, before any give-up can let go of it.
     *
     * @param data where a GET_DATA's data is
     * @return one of the outcomes above; every one from {@link #NOTHING} on answered a message
     */
    int take(int type, long token, AtomicBuffer data, int offset, int length) {
        boolean get = token >= 0 && isGet(token);
        if (get ? type == ShmWire.ACK || type == ShmWire.FLUSHED : type == ShmWire.GET_DATA) {
            return WRONG_KIND;
        }
        if (!takeAnswer(token)) {
            return OUT_OF_ORDER;
        }
        if (token < 0) {
            return directAnswered() ? DIRECT : NOTHING; // not if the lane's end already abandoned it
        }
        if (!awaited(token)) {
            return NOTHING;
        }
        if (type == ShmWire.GET_DATA || type == ShmWire.NACK) {
            ByteBuffer dst = takeGetBuffer(token);
            if (type == ShmWire.GET_DATA) {
                if (dst == null) {
                    getDropped(token); // given up first: no buffer to write, no answer
                    return NOTHING;
                }
                if (length != dst.remaining()) {
                    askedLength = dst.remaining();
                    getDropped(token);
                    return BAD_LENGTH;
                }
                data.getBytes(offset, dst, dst.position(), dst.remaining());
            }
        }
        return DELIVER;
    }

    /** @return what the get answered {@link #BAD_LENGTH} asked for */
    int askedLength() {
        return askedLength;
    }

    /**
     * An answer came: it must answer the oldest message still unanswered.
     *
     * @return whether it does (then that message is answered); false: out of order, nothing changed
     */
    boolean takeAnswer(long token) {
        boolean inOrder = posted != null && !posted.isEmpty() && posted.peekLong() == token;
        if (inOrder) {
            posted.pollLong();
            answeredCount++;
            remove(getTokens, token);
            remove(amTokens, token);
        }
        return inOrder;
    }

    /**
     * A direct active message was answered in order.
     *
     * @return whether its answer was still owed (then one fewer is); false if the lane's end abandoned it already
     */
    boolean directAnswered() {
        if (directUnanswered > 0) {
            directUnanswered--;
            return true;
        }
        return false;
    }

    /**
     * @return whether the endpoint still waits for this in-order answer: always before the
     *     revocation; after it, only for a held token, and once
     */
    boolean awaited(long token) {
        return !revoked || (held != null && held.remove(token));
    }

    /** @return the buffer an answered get writes into, no longer remembered; null if let go at the lane's end */
    ByteBuffer takeGetBuffer(long token) {
        return gets == null ? null : gets.remove(token);
    }

    /** A get's answer went nowhere: its revocation says stopped, so the endpoint sends it again. */
    void getDropped(long token) {
        droppedGets = added(droppedGets, token);
    }

    /** The lane failed: no reply writes into a GET buffer after this. */
    void letGoGetBuffers() {
        gets = null;
    }

    /**
     * The endpoint gave the lane up: no reply writes into a GET buffer after this, and the lane is
     * forgotten once revoked and no answer is owed ({@link #takeForgettable}).
     */
    void givenUp() {
        gets = null;
        closeWhenAnswered = true;
    }

    /** The target dropped the connection with every answer it owed (a RESET): none will come. */
    void markAnswersLost() {
        answersLost = true;
    }

    /** @return whether the target said it dropped the answers it owed ({@link #markAnswersLost}) */
    boolean answersLost() {
        return answersLost;
    }

    /** The endpoint revokes the lane (before its gate is): no message is claimed after this. */
    void markRevoked() {
        revoked = true;
    }

    /**
     * Decides each unanswered message's fate from what revoking the lane's gate found: the peer took
     * the first {@code g.taken()} messages of the lane completely (answered or not), and is still
     * applying the next if {@code g.inProgress()}. Remembers the held tokens, lets go the GET
     * buffers of messages that will not be answered, and owes no more the direct messages decided here.
     *
     * @param g what revoking the gate found
     * @param alive whether the peer process lives (a dead one answers nothing more)
     * @return the fates
     */
    Fates settle(Gates.Revoked g, boolean alive) {
        LongHashSet notTaken = new LongHashSet();
        LongHashSet stopped = new LongHashSet();
        int directNotTaken = 0;
        int directStopped = 0;
        // Taken completely: answered already (in this worker's inbox, or the peer's backlog).
        long done = Math.max(0, g.taken() - answeredCount);
        long taken = Math.max(0, g.taken() + (g.inProgress() ? 1 : 0) - answeredCount);
        LongArrayQueue.LongIterator it = posted().iterator();
        for (long k = 0; it.hasNext(); k++) {
            long token = it.nextValue();
            boolean wasTaken = k < taken;
            // What the peer is still working on: an atomic or a write ends within microseconds once
            // the peer runs, and work fenced behind it must wait for it; a handler may take any time,
            // and nothing is fenced behind a message, so the endpoint does not wait for one.
            boolean message = token < 0 || contains(amTokens, token);
            boolean answerFollows = alive && wasTaken && !contains(getTokens, token) && (k < done || !message);
            if (answerFollows) {
                if (token >= 0) {
                    held = added(held, token); // its answer follows (a direct message's is counted apart)
                }
                continue;
            }
            if (token < 0) {
                if (wasTaken) {
                    directStopped++;
                } else {
                    directNotTaken++;
                }
            } else {
                (wasTaken ? stopped : notTaken).add(token);
                if (gets != null) {
                    gets.remove(token); // no answer will write into its buffer
                }
            }
        }
        directUnanswered -= directNotTaken + directStopped;
        if (neverSent != null) {
            notTaken.addAll(neverSent);
        }
        if (droppedGets != null) {
            stopped.addAll(droppedGets);
        } // a get has no effect, but its answer went nowhere: send it again
        return new Fates(notTaken, stopped, directNotTaken, directStopped);
    }

    /** @return whether answers are owed on this lane (even after it was given up): held ones, direct ones */
    boolean awaitingAnswers() {
        return directUnanswered > 0 || (held != null && !held.isEmpty());
    }

    /**
     * @return true once: when the lane was given up and revoked and no answer is owed any more (then
     *     the transport forgets it)
     */
    boolean takeForgettable() {
        boolean close = closeWhenAnswered && revoked && directUnanswered == 0 && (held == null || held.isEmpty());
        if (close) {
            closeWhenAnswered = false;
        }
        return close;
    }

    /**
     * The lane died: no answer will come for the direct active messages still out.
     *
     * @return how many there were (none is owed now)
     */
    int abandonDirect() {
        int n = directUnanswered;
        directUnanswered = 0;
        return n;
    }

    /**
     * The lane died: no answer will come for the held tokens.
     *
     * @return them (none is held now)
     */
    long[] abandonHeld() {
        long[] owed = new long[held == null ? 0 : held.size()];
        if (held != null) {
            LongHashSet.LongIterator it = held.iterator();
            for (int i = 0; it.hasNext(); i++) {
                owed[i] = it.nextValue();
            }
        }
        held = null;
        return owed;
    }

    private static boolean contains(LongHashSet set, long token) {
        return set != null && set.contains(token);
    }

    private static void remove(LongHashSet set, long token) {
        if (set != null) {
            set.remove(token);
        }
    }

    /** @return {@code set} with {@code token} added, the set created if it was null */
    private static LongHashSet added(LongHashSet set, long token) {
        LongHashSet s = set != null ? set : new LongHashSet();
        s.add(token);
        return s;
    }
}
