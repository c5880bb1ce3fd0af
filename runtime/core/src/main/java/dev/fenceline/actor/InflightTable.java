package dev.fenceline.actor;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * An endpoint's requests between acceptance and completion: their order, the fragments they have
 * on lanes (by token), and the sequence numbers that exactly-once needs, with the low-water mark
 * that lets targets forget. Owned by the endpoint actor; no other thread touches it.
 */
final class InflightTable {
    /**
     * One posted (or parked) fragment: which request, which fragment, and where it went.
     *
     * @param request the request
     * @param fragment its index within the request
     * @param lane the slot it was posted on
     * @param connectionId the connection in that slot then
     * @param deduplicated whether that connection's target deduplicates re-sent copies
     */
    record Fragment(Request request, int fragment, int lane, long connectionId, boolean deduplicated) {
    }

    private long nextOrder = 1;
    private long nextSn;
    /** Requests with sequence numbers, in sequence order, until they complete: the low-water mark. */
    private final ArrayDeque<Request> bySequence = new ArrayDeque<>();
    private final Long2ObjectHashMap<Fragment> byToken = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<Request> outstanding = new Long2ObjectHashMap<>();

    /**
     * Gives a request (or a flush) its place in the endpoint's order.
     *
     * @param r a request just taken from the submission queue
     */
    void order(Request r) {
        r.seq = nextOrder++;
    }

    /** @param r an accepted operation, outstanding until {@link #retire} */
    void admit(Request r) {
        outstanding.put(r.seq, r);
    }

    /** @param r an outstanding request that is about to complete: it no longer counts */
    void retire(Request r) {
        outstanding.remove(r.seq);
    }

    /** @return whether no accepted operation is outstanding */
    boolean isEmpty() {
        return outstanding.isEmpty();
    }

    /**
     * @param seq a flush's place in the order
     * @return how many outstanding operations come before it
     */
    int outstandingBefore(long seq) {
        int n = 0;
        for (Request r : outstanding.values()) {
            if (r.seq < seq) {
                n++;
            }
        }
        return n;
    }

    /**
     * Numbers a request's fragments at its first post; a restart keeps the numbers, so the target
     * recognises re-sent copies.
     *
     * @param r the request
     * @param fragments how many fragments it has
     */
    void number(Request r, int fragments) {
        if (r.firstSn < 0) {
            r.firstSn = nextSn;
            nextSn += fragments;
            r.fragmentsOutstanding = fragments;
            bySequence.addLast(r);
        }
    }

    /**
     * The smallest sequence number of a request not yet complete: targets forget what lies below
     * it. Requests enter in sequence order and completed ones leave from the head, so this is O(1)
     * amortized and allocation-free.
     *
     * @return the low-water mark
     */
    long lowWater() {
        Request h;
        while ((h = bySequence.peekFirst()) != null && h.done) {
            bySequence.pollFirst();
        }
        return h == null ? nextSn : h.firstSn;
    }

    /**
     * @param token the fragment's operation token
     * @param fragment where it went
     */
    void track(long token, Fragment fragment) {
        byToken.put(token, fragment);
    }

    /**
     * @param token an answered operation's token
     * @return its fragment, removed, or null if it is unknown or its request is complete already
     *     (a fragment of a connection that a reconfiguration dropped)
     */
    Fragment take(long token) {
        Fragment f = byToken.remove(token);
        return f == null || f.request().done ? null : f;
    }

    /** @return every fragment on a lane, by token (a live view, for the replay planner) */
    Long2ObjectHashMap<Fragment> fragments() {
        return byToken;
    }

    /**
     * The endpoint ended: forgets everything.
     *
     * @return the outstanding operations, in order
     */
    List<Request> clear() {
        List<Request> all = new ArrayList<>(outstanding.values());
        outstanding.clear();
        byToken.clear();
        all.sort((a, b) -> Long.compare(a.seq, b.seq));
        return all;
    }
}
