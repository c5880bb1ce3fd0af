package dev.fenceline.actor;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;

/**
 * What a reconfiguration restarts (docs/reconfiguration.md), as a pure function of the in-flight table and the
 * new lane table: every fragment posted on, or parked for, a connection that is no longer in its
 * slot is dropped, and the requests they belong to (unless complete already) are restarted in issue
 * order with just those fragments.
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

    /**
     * One request to restart.
     *
     * @param request the request
     * @param fragments the fragments to send again, ascending (the others completed)
     * @param sentWithoutDedup whether one of them may have reached a target that does not
     *     deduplicate: then a request that is not idempotent must not be sent again
     */
    record Restart(Request request, int[] fragments, boolean sentWithoutDedup) {
    }

    /** What to do with a restarted request. */
    enum Verdict {
        /** Send its fragments again on the current lanes, with its epoch and sequence numbers. */
        RESTART,
        /** It may or may not have been applied, and may not be applied twice: fail it as unknown. */
        OUTCOME_UNKNOWN,
        /** No live lane can carry it: fail it. */
        NO_LANE
    }

    /**
     * @param dropped tokens of the fragments whose connection left its slot
     * @param restarts the requests to restart, in issue order
     */
    record Plan(long[] dropped, List<Restart> restarts) {
    }

    /**
     * @param fragments the in-flight fragments by token
     * @param neverSent tokens of fragments that were parked and never reached a transport
     * @param current whether a connection is still in its slot
     * @return what to drop and what to restart
     */
    static Plan plan(Long2ObjectHashMap<InflightTable.Fragment> fragments, LongHashSet neverSent,
            Current current) {
        TreeMap<Long, List<InflightTable.Fragment>> byRequest = new TreeMap<>();
        TreeMap<Long, Boolean> unsafe = new TreeMap<>();
        long[] dropped = new long[fragments.size()];
        int n = 0;
        for (Long2ObjectHashMap<InflightTable.Fragment>.EntryIterator it = fragments.entrySet().iterator();
                it.hasNext();) {
            it.next();
            long token = it.getLongKey();
            InflightTable.Fragment f = it.getValue();
            if (current.test(f.lane(), f.connectionId())) {
                continue;
            }
            dropped[n++] = token;
            Request r = f.request();
            if (r.done) {
                continue; // completed (or failed) already: nothing to restart
            }
            byRequest.computeIfAbsent(r.seq, k -> new ArrayList<>()).add(f);
            boolean mayHaveArrived = !f.deduplicated() && !neverSent.contains(token);
            unsafe.merge(r.seq, mayHaveArrived, Boolean::logicalOr);
        }
        List<Restart> restarts = new ArrayList<>(byRequest.size());
        byRequest.forEach((seq, list) -> {
            int[] indices = list.stream().mapToInt(InflightTable.Fragment::fragment).sorted().toArray();
            restarts.add(new Restart(list.get(0).request(), indices, unsafe.get(seq)));
        });
        return new Plan(java.util.Arrays.copyOf(dropped, n), restarts);
    }

    /**
     * Atomics and active messages are not idempotent: re-sending one that may have arrived on a
     * lane without deduplication could apply it twice. Puts and gets are sent again.
     *
     * @param restart the request to restart
     * @param lane the lane picked for it, or -1 if none can carry it
     * @return what to do
     */
    static Verdict verdict(Restart restart, int lane) {
        Request.Kind k = restart.request().kind;
        boolean idempotent = k == Request.Kind.PUT || k == Request.Kind.GET;
        if (!idempotent && restart.sentWithoutDedup()) {
            return Verdict.OUTCOME_UNKNOWN;
        }
        return lane < 0 ? Verdict.NO_LANE : Verdict.RESTART;
    }
}
