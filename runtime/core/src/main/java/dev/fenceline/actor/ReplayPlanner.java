package dev.fenceline.actor;

import dev.fenceline.spi.Revocation;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;

/**
 * What a reconfiguration restarts (docs/reconfiguration.md), as a pure function of the in-flight
 * table, the new lane table and what the given-up connections said of their copies
 * ({@link Revocation}): a fragment whose connection will still answer stays in flight; every other
 * fragment posted on, or parked for, a connection that is no longer in its slot is dropped, and the
 * requests they belong to (unless complete already) are restarted in issue order with just those
 * fragments, or failed where sending them again could apply them twice or late.
 */
final class ReplayPlanner {
    private ReplayPlanner() {
    }

    /** Whether a fragment's connection is still the one in its slot. */
    @FunctionalInterface
    interface Current {
        /**
         * @param lane a slot
         * @param connectionId a connection's id
         * @return whether that connection is in the slot now
         */
        boolean test(int lane, long connectionId);
    }

    /** What a given-up connection said of one of its copies. */
    @FunctionalInterface
    interface Fates {
        /**
         * @param connectionId the connection
         * @param token the fragment's token
         * @return its fate
         */
        Revocation.Fate fate(long connectionId, long token);
    }

    /**
     * One request to restart.
     *
     * @param request the request
     * @param fragments the fragments to send again, ascending (the others completed, or will answer)
     * @param mayHaveApplied whether a dropped copy may have been applied already, or (a put) another
     *     of its fragments was, or may still be by a connection that will answer it
     * @param mayStillApply whether a dropped copy may be applied later, by its old connection's target
     * @param scope the old connection's exactly-once scope (null: none)
     * @param overtaken whether a write of a later epoch, posted after it on the same connection, may
     *     have been applied (a weak fence let it follow on that lane): a get that may have read
     *     already cannot read again, it would see that write
     */
    record Restart(Request request, int[] fragments, boolean mayHaveApplied, boolean mayStillApply, Object scope,
            boolean overtaken) {
    }

    /** What to do with a restarted request. */
    enum Verdict {
        /** Send its fragments again on the current lanes, with its epoch and sequence numbers. */
        RESTART,
        /** It may or may not have been applied, and may not be applied twice: fail it as unknown. */
        OUTCOME_UNKNOWN,
        /** No live lane can carry it, and no copy of it was applied: fail it. */
        NO_LANE,
        /**
         * A copy may still be applied later and no live lane reaches the same exactly-once window:
         * fail it as unknown, and end the endpoint, so that nothing fenced after it can go ahead
         * and be overtaken by that copy.
         */
        UNORDERED
    }

    /**
     * @param dropped tokens of the fragments that left the in-flight table
     * @param held tokens of the fragments that stay in flight on a given-up connection, which will
     *     answer them
     * @param restarts the requests to restart, in issue order
     */
    record Plan(long[] dropped, long[] held, List<Restart> restarts) {
        /** Nothing was in flight. */
        static final Plan NONE = new Plan(new long[0], new long[0], List.of());
    }

    /**
     * @param fragments the in-flight fragments by token
     * @param neverSent tokens of fragments that were parked and never reached a transport
     * @param alreadyHeld tokens held since an earlier reconfiguration (they stay as they are)
     * @param current whether a connection is still in its slot
     * @param fates what the given-up connections said of their copies
     * @return what to drop, what to hold and what to restart
     */
    static Plan plan(Long2ObjectHashMap<InflightTable.Fragment> fragments, LongHashSet neverSent,
            java.util.function.LongPredicate alreadyHeld, Current current, Fates fates) {
        TreeMap<Long, List<InflightTable.Fragment>> byRequest = new TreeMap<>();
        TreeMap<Long, boolean[]> risks = new TreeMap<>(); // by request: {may have applied, may still apply}
        LongArrayList dropped = new LongArrayList();
        LongArrayList held = new LongArrayList();
        for (Long2ObjectHashMap<InflightTable.Fragment>.EntryIterator it = fragments.entrySet().iterator();
                it.hasNext();) {
            it.next();
            long token = it.getLongKey();
            InflightTable.Fragment f = it.getValue();
            if (current.test(f.lane(), f.connectionId()) || alreadyHeld.test(token)) {
                continue;
            }
            Request r = f.request();
            Revocation.Fate fate = neverSent.contains(token) ? Revocation.Fate.REVOKED
                    : fates.fate(f.connectionId(), token);
            if (fate == Revocation.Fate.ANSWER_FOLLOWS && !r.done) {
                held.addLong(token);
                continue;
            }
            dropped.addLong(token);
            if (r.done) {
                continue; // completed (or failed) already: nothing to restart
            }
            byRequest.computeIfAbsent(r.seq, k -> new ArrayList<>()).add(f);
            boolean[] risk = risks.computeIfAbsent(r.seq, k -> new boolean[2]);
            risk[0] |= fate != Revocation.Fate.REVOKED;
            risk[1] |= fate == Revocation.Fate.MAY_STILL_APPLY;
        }
        List<Restart> restarts = new ArrayList<>(byRequest.size());
        byRequest.forEach((seq, list) -> {
            int[] indices = list.stream().mapToInt(InflightTable.Fragment::fragment).sorted().toArray();
            boolean[] risk = risks.get(seq);
            Request r = list.get(0).request();
            boolean overtaken = r.kind == Request.Kind.GET && risk[0]
                    && overtaken(r, list, fragments, neverSent, current, fates);
            // A put whose other fragments completed (applied) or are still answered elsewhere is
            // partly written: if it fails now, it did not fail unapplied.
            boolean partly = r.kind == Request.Kind.PUT && indices.length < r.fragmentCount;
            restarts.add(new Restart(r, indices, risk[0] || partly, risk[1], list.get(0).scope(), overtaken));
        });
        return new Plan(dropped.toLongArray(), held.toLongArray(), restarts);
    }

    /**
     * Whether a write of a later epoch than {@code get}, posted after one of its copies on the same
     * given-up connection, may have been applied: what the get would read again is then newer than
     * its fences allow. (Answers on a connection come in order, so a later write that completed is
     * one whose get copy was answered too; only copies still in the table count.)
     */
    private static boolean overtaken(Request get, List<InflightTable.Fragment> copies,
            Long2ObjectHashMap<InflightTable.Fragment> fragments, LongHashSet neverSent, Current current, Fates fates) {
        for (Long2ObjectHashMap<InflightTable.Fragment>.EntryIterator it = fragments.entrySet().iterator();
                it.hasNext();) {
            it.next();
            long token = it.getLongKey();
            InflightTable.Fragment f = it.getValue();
            Request w = f.request();
            if (w.epoch <= get.epoch || w.kind == Request.Kind.GET || w.kind == Request.Kind.AM
                    || current.test(f.lane(), f.connectionId()) || neverSent.contains(token)) {
                continue;
            }
            for (InflightTable.Fragment c : copies) {
                if (c.connectionId() == f.connectionId() && fates.fate(f.connectionId(), token) != Revocation.Fate.REVOKED) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A copy that may still apply is sent again only where the target recognizes it (the same
     * exactly-once scope); so is one that may have applied, unless the request is idempotent (puts
     * and gets: applying one again before anything fenced after it changes nothing). Atomics and
     * active messages must not be applied twice.
     *
     * @param restart the request to restart
     * @param lane the lane picked for it, or -1 if none can carry it
     * @param laneScope that lane's exactly-once scope (null: none, or no lane)
     * @return what to do
     */
    static Verdict verdict(Restart restart, int lane, Object laneScope) {
        boolean sameScope = lane >= 0 && restart.scope() != null && restart.scope().equals(laneScope);
        if (restart.mayStillApply() && !sameScope) {
            return Verdict.UNORDERED;
        }
        Request.Kind k = restart.request().kind;
        if (restart.overtaken()) {
            return Verdict.OUTCOME_UNKNOWN; // its first read is lost, and a second would be too new
        }
        boolean idempotent = k == Request.Kind.PUT || k == Request.Kind.GET;
        if (restart.mayHaveApplied() && !idempotent && !sameScope) {
            return Verdict.OUTCOME_UNKNOWN;
        }
        if (lane < 0) {
            return restart.mayHaveApplied() ? Verdict.OUTCOME_UNKNOWN : Verdict.NO_LANE;
        }
        return Verdict.RESTART;
    }

    /**
     * Judged on every copy so far, not the last one's alone: one re-sent and then withdrawn says
     * nothing of the first, which a lane of another scope would apply a second time. A copy that
     * may still apply late needs a lane of its own scope; one that may have applied, for what is not
     * idempotent, a lane of the scope of every such copy.
     *
     * @param r a request with copies on given-up connections
     * @param lane the lane it would go out on now, or -1
     * @param laneScope that lane's exactly-once scope (null: none, or no lane)
     * @param fragments its fragments to send again
     * @param overtaken whether its first read may be lost with a write fenced after it applied since
     * @return what to do with it
     */
    static Verdict judge(Request r, int lane, Object laneScope, int[] fragments, boolean overtaken) {
        return r.stillApplyScope != null && (lane < 0 || !r.stillApplyScope.equals(laneScope))
                ? Verdict.UNORDERED
                : verdict(new Restart(r, fragments, r.mayHaveApplied, false, r.riskScope, overtaken), lane, laneScope);
    }

    /**
     * @param verdict {@link Verdict#OUTCOME_UNKNOWN} or {@link Verdict#UNORDERED}
     * @param r the request so judged
     * @param overtaken whether its first read may have been overtaken
     * @return its outcome
     */
    static dev.fenceline.OutcomeUnknownException refusal(Verdict verdict, Request r, boolean overtaken) {
        String what = r.kind + String.format(" at 0x%x", r.remoteAddress);
        return switch (verdict) {
            case OUTCOME_UNKNOWN -> overtaken ? notReadAgain(what) : notResent(what);
            case UNORDERED -> mayApplyLate(what);
            case RESTART, NO_LANE -> throw new IllegalArgumentException("not a refusal's verdict: " + verdict);
        };
    }

    /**
     * @param what the request and its address
     * @return its outcome when it may have been applied and no live lane would recognize a copy
     */
    static dev.fenceline.OutcomeUnknownException notResent(String what) {
        return new dev.fenceline.OutcomeUnknownException(what + " was in flight on a lane that failed: it may have"
                + " been applied, and no live lane would recognize it if it were sent again, so it is not");
    }

    /**
     * @param what the get and its address
     * @return its outcome when its copy may have read already, its answer was lost, and a later
     *     write fenced after it may have been applied since
     */
    static dev.fenceline.OutcomeUnknownException notReadAgain(String what) {
        return new dev.fenceline.OutcomeUnknownException(what + " was in flight on a lane that failed, after it may"
                + " have read, with its answer lost; a write fenced after it may have been applied on that lane since,"
                + " so it is not read again (that could return newer data than its fences allow)");
    }

    /**
     * @param what the request and its address
     * @return its outcome when a copy may still be applied later by the lane that failed
     */
    static dev.fenceline.OutcomeUnknownException mayApplyLate(String what) {
        return new dev.fenceline.OutcomeUnknownException(what + " was in flight on a lane that failed, where a copy"
                + " of it may still be applied later; no live lane would recognize it if it were sent again");
    }

    /**
     * @param endpoint the endpoint's name
     * @return the endpoint's end when a late copy could overtake fenced work
     */
    static dev.fenceline.EndpointFailedException unordered(String endpoint) {
        return new dev.fenceline.EndpointFailedException("endpoint " + endpoint + ": a lane that failed may still"
                + " apply copies of its operations later, and no live lane reaches the same exactly-once window; the"
                + " endpoint ends so that nothing fenced after them can be overtaken by them");
    }
}
