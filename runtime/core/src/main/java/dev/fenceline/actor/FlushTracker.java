package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.actor.EndpointCounters.Counter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.LongPredicate;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * An endpoint's flushes: the user flushes in submission order, and every lane flush out on a lane
 * with its owner (a user flush, the strong fence, or a keepalive probe). A user flush starts once no
 * fence-queued request issued before it remains, then waits for every operation issued before it,
 * one flush per live lane that carried something, and the answers to the direct active messages
 * sent before it. Owned by the endpoint actor; no other thread touches it.
 */
final class FlushTracker {
    /** Whose lane flush it is. */
    sealed interface Owner permits UserFlush, FenceFlush, Probe {
    }

    /** A user's flush and what it still waits for. */
    static final class UserFlush implements Owner {
        final Request request;
        /** Lane flushes and earlier operations it still waits for. */
        int waits;
        /** The direct active messages sent before it, whose answers it waits for. */
        long directTarget;
        boolean started;
        /** A reconfiguration dropped some of its lane flushes: flush every live lane again after the replay. */
        boolean lostLanes;
        /** When the endpoint took it, for its latency. */
        final long acceptedAt;

        UserFlush(Request request, long acceptedAt) {
            this.request = request;
            this.acceptedAt = acceptedAt;
        }
    }

    /** The lane flushes of the in-flight strong fence. */
    record FenceFlush() implements Owner {
        static final FenceFlush INSTANCE = new FenceFlush();
    }

    /** A keepalive probe of an idle lane. */
    record Probe() implements Owner {
        static final Probe INSTANCE = new Probe();
    }

    /**
     * One lane flush out on a lane.
     *
     * @param owner whose it is
     * @param lane the slot
     * @param connectionId the connection in the slot when it was issued
     */
    record Token(Owner owner, int lane, long connectionId) {
    }

    private final LaneSlots slots;
    private final InflightTable inflight;
    private final EndpointChannel channel;
    private final EndpointCounters counters;
    private final java.util.function.LongSupplier clock;
    /** Lane flushes out, but a lane's keepalive probe: made at the first (idle endpoints never flush). */
    private Long2ObjectHashMap<Token> tokens;
    /**
     * A keepalive probe out per lane, by slot: its token (0: none) and the connection probed. Idle
     * endpoints are probed every interval; in a map each would keep 176 bytes of table for it.
     */
    private long[] probeTokens = NO_PROBES;
    private long[] probeConnections = NO_PROBES;
    private static final long[] NO_PROBES = new long[0];
    private final ArrayList<UserFlush> flushes = new ArrayList<>();

    FlushTracker(LaneSlots slots, InflightTable inflight, EndpointChannel channel, EndpointCounters counters,
            java.util.function.LongSupplier clock) {
        this.slots = slots;
        this.inflight = inflight;
        this.channel = channel;
        this.counters = counters;
        this.clock = clock;
    }

    /** @param flush a user flush, in submission order */
    void add(Request flush) {
        flushes.add(new UserFlush(flush, clock.getAsLong()));
    }

    /** @return whether a user flush is waiting */
    boolean hasUserFlushes() {
        return !flushes.isEmpty();
    }

    /**
     * @param owner whose lane flush
     * @param lane a live slot
     * @return whether an answer will follow (false: the lane was flushed already)
     */
    boolean issue(Owner owner, int lane) {
        long token = slots.nextToken();
        long connectionId = slots.table().connection(lane).id();
        boolean probe = owner instanceof Probe;
        if (probe && lane >= probeTokens.length) {
            probeTokens = java.util.Arrays.copyOf(probeTokens, lane + 1);
            probeConnections = java.util.Arrays.copyOf(probeConnections, lane + 1);
        }
        boolean inSlot = probe && probeTokens[lane] == 0; // a second probe on the lane goes to the map
        if (inSlot) {
            probeTokens[lane] = token;
            probeConnections[lane] = connectionId;
        } else {
            if (tokens == null) {
                tokens = new Long2ObjectHashMap<>();
            }
            tokens.put(token, new Token(owner, lane, connectionId));
        }
        if (!slots.flush(lane, token, probe)) {
            if (inSlot) {
                probeTokens[lane] = 0;
            } else {
                tokens.remove(token);
            }
            return false;
        }
        return true;
    }

    /** @return the slot of a probe out with this token, or -1 */
    private int probeSlot(long token) {
        for (int i = 0; i < probeTokens.length; i++) {
            if (probeTokens[i] == token) {
                return i;
            }
        }
        return -1;
    }

    /**
     * @param owner whose lane flushes
     * @param lanes the slots to flush (dead ones are skipped)
     * @return how many answers will follow
     */
    int issueAll(Owner owner, long lanes) {
        int n = 0;
        for (int i = 0; i < slots.table().size(); i++) {
            if ((lanes & (1L << i)) != 0 && slots.table().isLive(i) && issue(owner, i)) {
                n++;
            }
        }
        return n;
    }

    /**
     * @param token an answered lane flush's token
     * @return its record, removed, or null if a reconfiguration or a failure dropped it
     */
    Token take(long token) {
        int slot = probeSlot(token);
        if (slot >= 0) {
            probeTokens[slot] = 0;
            return new Token(Probe.INSTANCE, slot, probeConnections[slot]);
        }
        return tokens == null ? null : tokens.remove(token);
    }

    /**
     * @param token a lane flush's token
     * @return its record (kept), or null
     */
    Token peek(long token) {
        int slot = probeSlot(token);
        if (slot >= 0) {
            return new Token(Probe.INSTANCE, slot, probeConnections[slot]);
        }
        return tokens == null ? null : tokens.get(token);
    }

    /** @param owner every lane flush of this owner is forgotten: their answers will be ignored */
    void dropAll(Owner owner) {
        if (owner instanceof Probe) {
            java.util.Arrays.fill(probeTokens, 0);
        }
        if (tokens != null) {
            tokens.values().removeIf(t -> t.owner() == owner);
        }
    }

    /**
     * A user flush's lane flush failed: the flush fails with that error.
     *
     * @param f the flush
     * @param error why
     */
    void fail(UserFlush f, FencelineException error) {
        dropAll(f);
        flushes.remove(f);
        f.request.fail(error);
    }

    /** @param f a user flush one of whose lane flushes answered */
    void answered(UserFlush f) {
        f.waits--;
    }

    /** @param seq an operation that is about to complete: the flushes issued after it stop waiting for it */
    void retired(long seq) {
        for (UserFlush f : flushes) {
            if (f.started && f.request.seq > seq) {
                f.waits--;
            }
        }
    }

    /**
     * Lane flushes of connections no longer in their slot never answer now: a user flush keeps what
     * it has and flushes every live lane again after the replay; a probe's slot was reset.
     *
     * @return how many of the strong fence's lane flushes were lost
     */
    int dropStale() {
        int fenceLost = 0;
        for (int i = 0; i < probeTokens.length; i++) {
            if (probeTokens[i] != 0 && !slots.current(i, probeConnections[i])) {
                probeTokens[i] = 0;
            }
        }
        if (tokens == null) {
            return 0;
        }
        for (Iterator<Token> it = tokens.values().iterator(); it.hasNext();) {
            Token t = it.next();
            if (slots.current(t.lane(), t.connectionId())) {
                continue;
            }
            it.remove();
            if (t.owner() instanceof FenceFlush) {
                fenceLost++;
            } else if (t.owner() instanceof UserFlush f) {
                f.waits--;
                f.lostLanes = true;
            }
        }
        return fenceLost;
    }

    /** After a replay: the flushes that lost lane flushes flush every live lane, the replacements included. */
    void reissueLost() {
        for (UserFlush f : flushes) {
            if (f.started && f.lostLanes) {
                f.lostLanes = false;
                f.waits += issueAll(f, slots.table().liveMask());
            }
        }
    }

    /**
     * Starts every flush that no longer waits for fence-queued requests issued before it, and
     * completes those whose lane flushes, earlier operations and direct answers are all in. Later
     * epochs never delay an earlier flush: only operations with a smaller place in the order count.
     *
     * @param queuedBefore whether a fence-queued request comes before the given place in the order
     */
    void progress(LongPredicate queuedBefore) {
        Iterator<UserFlush> it = flushes.iterator();
        List<UserFlush> done = null;
        while (it.hasNext()) {
            UserFlush f = it.next();
            if (!f.started) {
                if (queuedBefore.test(f.request.seq)) {
                    break; // later flushes wait for the same queued work
                }
                start(f);
            }
            if (f.waits == 0 && channel.direct().answeredOrWake(f.directTarget)) {
                it.remove();
                if (done == null) {
                    done = new ArrayList<>(2);
                }
                done.add(f);
            }
        }
        if (done != null) {
            long now = clock.getAsLong();
            for (UserFlush f : done) {
                counters.increment(Counter.FLUSHES);
                channel.flushLatency().record(now - f.acceptedAt);
                // Implicit operations before it are complete; the first that failed fails the flush.
                FencelineException e = channel.flushError(f.request.submissionNumber, f.directTarget);
                if (e != null) {
                    f.request.fail(e);
                } else {
                    f.request.succeed(0);
                }
            }
        }
    }

    private void start(UserFlush f) {
        f.started = true;
        f.directTarget = channel.direct().sent();
        // A lane whose connection never carried anything has nothing to flush; an endpoint that
        // never sent anything completes a flush without touching a transport.
        f.waits = inflight.outstandingBefore(f.request.seq) + issueAll(f, slots.usedLive());
    }

    /**
     * The endpoint ended: forgets every flush.
     *
     * @return the user flushes that were waiting, in order
     */
    List<Request> clear() {
        List<Request> all = new ArrayList<>(flushes.size());
        for (UserFlush f : flushes) {
            all.add(f.request);
        }
        flushes.clear();
        tokens = null;
        java.util.Arrays.fill(probeTokens, 0);
        return all;
    }
}
