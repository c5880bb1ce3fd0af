package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.internal.LaneSelector;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.internal.OpClass;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.util.ArrayDeque;
import java.util.List;
import org.agrona.collections.LongHashSet;

/**
 * An endpoint's lane slots: the lane table, the lanes each operation class may use (spread
 * round-robin), and per lane what waits after {@link PostStatus#NO_RESOURCE}. Every operation and
 * lane flush goes to its lane through here, so nothing overtakes what waits on that lane. Owned by
 * the endpoint actor; no other thread touches it.
 */
final class LaneSlots {
    /** Where a lane's synchronous answers go: a lane may complete or refuse inside the call. */
    interface Answers {
        /**
         * @param token the operation's token
         * @param value its fetched value, or 0
         */
        void completed(long token, long value);

        /**
         * @param token the operation's token
         * @param error why the lane refused it
         */
        void failed(long token, FencelineException error);

        /** @param token a parked lane flush that the lane answered at once when it was retried */
        void flushed(long token);
    }

    private final Answers answers;
    private final LaneCounters counters;
    private LaneTable table = LaneTable.of(List.of());
    private int[][] selection = LaneSelector.select(table);
    /** The atomic class's lanes narrowed per operation and width to those whose hardware does it. */
    private int[][] atomicSelection = LaneSelector.selectAtomics(table, selection[OpClass.ATOMIC.ordinal()]);
    private final int[] roundRobin = new int[OpClass.values().length];
    private ArrayDeque<Pending>[] parked = newParked(0);
    /** Slots whose current connection has carried an operation or a flush (a fresh flush skips the rest). */
    private long used;
    /** The tokens lanes echo, one number space for operations and lane flushes. */
    private long nextToken = 1;
    /** Per slot, the last connection given up while failing over: closed when the endpoint ends. */
    // Grown to the slots used, not LaneTable.MAX_LANES: with ten thousand endpoints 64 slots each are megabytes.
    private LaneConnection[] givenUp = NO_CONNECTIONS;
    private static final LaneConnection[] NO_CONNECTIONS = new LaneConnection[0];

    /**
     * @param answers receives what lanes answer synchronously
     * @param counters where the lanes' parks are counted
     */
    LaneSlots(Answers answers, LaneCounters counters) {
        this.answers = answers;
        this.counters = counters;
    }

    /** @return the current lane table */
    LaneTable table() {
        return table;
    }

    /** @param next the new lane table; parked work of the slots that remain stays parked */
    void install(LaneTable next) {
        table = next;
        selection = LaneSelector.select(next);
        atomicSelection = LaneSelector.selectAtomics(next, selection[OpClass.ATOMIC.ordinal()]);
        if (parked.length != next.size()) {
            ArrayDeque<Pending>[] p = newParked(next.size());
            System.arraycopy(parked, 0, p, 0, Math.min(parked.length, p.length));
            parked = p;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array: one queue per lane
    private static ArrayDeque<Pending>[] newParked(int n) {
        return new ArrayDeque[n]; // each lane's queue is made when something first parks there: parking is rare
    }

    /** @return the lane's queue, made if it has none */
    private ArrayDeque<Pending> parking(int lane) {
        ArrayDeque<Pending> q = parked[lane];
        if (q == null) {
            q = new ArrayDeque<>(1); // it grows as any deque
            parked[lane] = q;
        }
        return q;
    }

    private static boolean empty(ArrayDeque<Pending> q) {
        return q == null || q.isEmpty();
    }

    /**
     * @param c an operation class
     * @return the live lanes of its most preferred type (see {@link LaneSelector}); do not modify
     */
    int[] candidates(OpClass c) {
        return selection[c.ordinal()];
    }

    /**
     * Spreads a class's requests over its candidate lanes (multi-rail).
     *
     * @param c an operation class
     * @return the lane for the next request of that class, or -1 if it has none
     */
    int pick(OpClass c) {
        return pick(c, selection[c.ordinal()]);
    }

    /**
     * As {@link #pick(OpClass)}, and an atomic goes to a lane whose hardware does its operation and
     * width where one of the class's lanes does.
     *
     * @param r a request
     * @param c its class
     * @return the lane for it, or -1 if it has none
     */
    int pick(Request r, OpClass c) {
        if (c != OpClass.ATOMIC) {
            return pick(c);
        }
        return pick(c, atomicSelection[LaneSelector.atomicIndex(r.kind == Request.Kind.CSWAP ? null : r.atomicOp,
                r.width)]);
    }

    private int pick(OpClass c, int[] lanes) {
        if (lanes.length == 0) {
            return -1;
        }
        if (lanes.length == 1) {
            return lanes[0];
        }
        int i = roundRobin[c.ordinal()]++;
        return lanes[Math.floorMod(i, lanes.length)];
    }

    /**
     * @param lane a slot
     * @param connectionId a connection's id
     * @return whether that connection is the one in the slot now (events of others are stale)
     */
    boolean current(int lane, long connectionId) {
        LaneConnection c = table.connection(lane);
        return c != null && c.id() == connectionId;
    }

    /** @return a new token */
    long nextToken() {
        return nextToken++;
    }

    /** @return whether anything waits on any lane */
    boolean anyParked() {
        for (ArrayDeque<Pending> p : parked) {
            if (!empty(p)) {
                return true;
            }
        }
        return false;
    }

    /** @return the live slots whose connection has carried something */
    long usedLive() {
        return table.liveMask() & used;
    }

    /** @param slots slots whose connection changed: their new connections have carried nothing */
    void forgetUse(long slots) {
        used &= ~slots;
    }

    /**
     * Posts an operation on its lane, behind whatever waits there.
     *
     * @param lane a live slot
     * @param op the operation
     */
    void post(int lane, TransportOp op) {
        used |= 1L << lane;
        ArrayDeque<Pending> waiting = parked[lane];
        if (!empty(waiting)) {
            waiting.add(new Pending.Op(op));
            return;
        }
        if (!tryPost(lane, op)) {
            counters.add(lane, LaneCounters.Counter.PARKS, 1);
            parking(lane).addFirst(new Pending.Op(op));
        }
    }

    /** @return false if the lane had no room (the caller parks the op at the head of its queue) */
    private boolean tryPost(int lane, TransportOp op) {
        PostStatus status;
        try {
            status = table.connection(lane).post(op);
        } catch (FencelineException e) {
            answers.failed(op.token(), e);
            return true;
        }
        switch (status) {
            case COMPLETED -> answers.completed(op.token(), op.result());
            case NO_RESOURCE -> {
                return false;
            }
            default -> { }
        }
        return true;
    }

    /**
     * Asks a lane for a remote flush (or a keepalive probe), behind whatever waits there.
     *
     * @param lane a live slot
     * @param token the flush's token
     * @param probe whether it is a keepalive probe
     * @return whether an answer will follow (false: the lane was already flushed, and says so now)
     */
    boolean flush(int lane, long token, boolean probe) {
        used |= 1L << lane;
        ArrayDeque<Pending> waiting = parked[lane];
        if (!empty(waiting)) {
            waiting.add(new Pending.Flush(token, probe));
            return true;
        }
        PostStatus s = send(table.connection(lane), token, probe);
        if (s == PostStatus.NO_RESOURCE) {
            counters.add(lane, LaneCounters.Counter.PARKS, 1);
            parking(lane).add(new Pending.Flush(token, probe));
            return true;
        }
        return s != PostStatus.COMPLETED;
    }

    private static PostStatus send(LaneConnection c, long token, boolean probe) {
        return probe ? c.keepalive(token) : c.flush(token);
    }

    /**
     * A lane has room again: what waits on it goes out in order, until it is full again.
     *
     * @param lane the slot
     */
    void ready(int lane) {
        ArrayDeque<Pending> waiting = parked[lane];
        while (!empty(waiting)) {
            Pending head = waiting.poll();
            if (head instanceof Pending.Op o) {
                if (!tryPost(lane, o.op())) {
                    waiting.addFirst(head); // still no room: back where it was, no new wrapper
                    break;
                }
            } else if (head instanceof Pending.Flush f) {
                PostStatus s = send(table.connection(lane), f.token(), f.probe());
                if (s == PostStatus.NO_RESOURCE) {
                    waiting.addFirst(head);
                    break;
                }
                if (s == PostStatus.COMPLETED) {
                    answers.flushed(f.token());
                }
            }
        }
    }

    /**
     * Empties the queues of slots whose connection changed: what waited there never reached a
     * transport, and is restarted or re-issued on the new table.
     *
     * @param slots the changed slots
     * @return the tokens of the operations that waited (never sent, so safe to restart anywhere)
     */
    LongHashSet unpark(long slots) {
        LongHashSet neverSent = new LongHashSet();
        for (int i = 0; i < parked.length; i++) {
            if ((slots & (1L << i)) != 0 && parked[i] != null) {
                for (Pending p : parked[i]) {
                    if (p instanceof Pending.Op o) {
                        neverSent.add(o.op().token());
                    }
                }
                parked[i].clear();
            }
        }
        return neverSent;
    }

    /** Drops everything that waits (the endpoint ended). */
    void clearParked() {
        for (ArrayDeque<Pending> p : parked) {
            if (p != null) {
                p.clear();
            }
        }
    }

    /**
     * @param lane a slot
     * @param c the connection the endpoint gave up there while failing over (the transport may still
     *     be reconnecting it); closed with the endpoint
     */
    void givenUp(int lane, LaneConnection c) {
        if (lane >= givenUp.length) {
            givenUp = java.util.Arrays.copyOf(givenUp, lane + 1);
        }
        givenUp[lane] = c;
    }

    /**
     * The endpoint ended: every connection in the table, and every one given up, is closed; those in
     * the table are asked what became of their copies.
     *
     * @param revocations where their answers go
     */
    void closeAll(Revocations revocations) {
        for (int i = 0; i < table.size(); i++) {
            if (table.connection(i) != null) {
                table.connection(i).close();
                revocations.revoke(table.connection(i));
            }
            if (i < givenUp.length && givenUp[i] != null) {
                givenUp[i].close(); // its transport may still be reconnecting it: stop that too
                givenUp[i] = null;
            }
        }
    }

    /**
     * @return the tokens of every operation parked on a lane, never handed to a transport
     */
    LongHashSet parkedTokens() {
        LongHashSet tokens = new LongHashSet();
        for (ArrayDeque<Pending> p : parked) {
            if (p == null) {
                continue;
            }
            for (Pending x : p) {
                if (x instanceof Pending.Op o) {
                    tokens.add(o.op().token());
                }
            }
        }
        return tokens;
    }

    /**
     * @param c a connection
     * @return whether it is in some slot of the table
     */
    boolean installed(LaneConnection c) {
        for (int i = 0; i < table.size(); i++) {
            if (table.connection(i) == c) {
                return true;
            }
        }
        return false;
    }
}
