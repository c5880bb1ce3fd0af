package dev.fenceline.actor;

import dev.fenceline.spi.Revocation;
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
     * @param scope that connection's exactly-once scope (null: re-sent copies are not recognized)
     */
    record Fragment(Request request, int fragment, int lane, long connectionId, Object scope) {
    }

    private long nextOrder = 1;
    /** The endpoint's sequence numbers, shared with threads that post on a lane themselves. */
    private final DirectLedger sequences;
    /** Requests with sequence numbers, in sequence order, until they complete: the low-water mark. */
    private final ArrayDeque<Request> bySequence = new ArrayDeque<>(1); // grows with the load; idle endpoints stay small
    private Long2ObjectHashMap<Fragment> byToken; // made at the first fragment: idle endpoints hold none
    /** Accepted and not retired, in order of acceptance: a list through the requests themselves. */
    private Request oldestOutstanding;
    private Request newestOutstanding;
    /** Tokens of fragments on given-up connections that will still answer; null until the first. */
    private org.agrona.collections.LongHashSet held;
    /** Requests with held fragments, in no particular order (few, and only after a failover). */
    private List<Request> holding; // made with held
    /** Gets posted and not yet retired: fenced work of a later epoch waits for them. */
    private final OpenReads reads = new OpenReads();
    /** Told when the oldest open get's epoch moves on. */
    private Runnable readsAnswered = () -> { };

    /** @param sequences where the endpoint's sequence numbers come from */
    InflightTable(DirectLedger sequences) {
        this.sequences = sequences;
    }

    /** A table with a numbering of its own (no calling thread posts beside it). */
    InflightTable() {
        this(new DirectLedger(new ImplicitErrors(), new SubmissionQueue(), WorkerCounts.create()));
    }

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
        if (isOutstanding(r)) {
            return;
        }
        r.previousOutstanding = newestOutstanding;
        r.nextOutstanding = null;
        if (newestOutstanding == null) {
            oldestOutstanding = r;
        } else {
            newestOutstanding.nextOutstanding = r;
        }
        newestOutstanding = r;
    }

    /** @param r an outstanding request that is about to complete: it no longer counts */
    void retire(Request r) {
        if (isOutstanding(r)) {
            unlink(r);
        }
        if (r.readOpen) {
            r.readOpen = false;
            if (reads.closed(r.epoch)) {
                readsAnswered.run();
            }
        }
    }

    /** @return whether {@code r} is in the list: the head, or linked behind another */
    private boolean isOutstanding(Request r) {
        return r.previousOutstanding != null || oldestOutstanding == r;
    }

    private void unlink(Request r) {
        if (r.previousOutstanding == null) {
            oldestOutstanding = r.nextOutstanding;
        } else {
            r.previousOutstanding.nextOutstanding = r.nextOutstanding;
        }
        if (r.nextOutstanding == null) {
            newestOutstanding = r.previousOutstanding;
        } else {
            r.nextOutstanding.previousOutstanding = r.previousOutstanding;
        }
        r.previousOutstanding = null;
        r.nextOutstanding = null;
    }

    /** @param action what to do when the oldest open get was answered (fenced work may go) */
    void onReadsAnswered(Runnable action) {
        this.readsAnswered = action;
    }

    /**
     * @param epoch a request's epoch
     * @return whether a get of an earlier epoch was posted and is not answered yet
     */
    boolean readOpenBefore(long epoch) {
        return reads.before(epoch);
    }

    /** @return whether no accepted operation is outstanding */
    boolean isEmpty() {
        return oldestOutstanding == null;
    }

    /**
     * @param seq a flush's place in the order
     * @return how many outstanding operations come before it
     */
    int outstandingBefore(long seq) {
        int n = 0;
        for (Request r = oldestOutstanding; r != null; r = r.nextOutstanding) {
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
        if (r.kind == Request.Kind.GET && !r.readOpen) {
            r.readOpen = true; // open from its first post until it is retired, restarts included
            reads.opened(r.epoch);
        }
        if (r.firstSn < 0) {
            r.firstSn = sequences.takeSequences(fragments);
            r.fragmentsOutstanding = fragments;
            r.fragmentCount = fragments;
            bySequence.addLast(r);
        }
    }

    /**
     * Takes over a request a calling thread posted, numbered and sent as one fragment, whose lane
     * ended before its answer: it is outstanding from now on, as if the actor had posted it. The
     * actor takes no submission while posted requests are out, so these are the oldest numbers;
     * call in their numbering order.
     *
     * @param r the request, numbered ({@code firstSn}) by its lane
     * @param token the token it was sent with
     * @param fragment where it went
     */
    void adopt(Request r, long token, Fragment fragment) {
        order(r);
        admit(r);
        r.posted = true;
        r.fragmentsOutstanding = 1;
        if (r.kind == Request.Kind.GET && !r.readOpen) {
            r.readOpen = true;
            reads.opened(r.epoch);
        }
        bySequence.addLast(r);
        track(token, fragment);
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
        return h == null ? sequences.nextSequence() : h.firstSn;
    }

    /**
     * @param token the fragment's operation token
     * @param fragment where it went
     */
    void track(long token, Fragment fragment) {
        fragments().put(token, fragment);
    }

    /**
     * @param token an answered operation's token
     * @return its fragment, removed, or null if it is unknown or its request is complete already
     *     (a fragment of a connection that a reconfiguration dropped)
     */
    Fragment take(long token) {
        Fragment f = byToken == null ? null : byToken.remove(token);
        if (f != null && held != null && held.remove(token)) {
            Request r = f.request();
            if (--r.held == 0) {
                holding.remove(r);
            }
        }
        return f == null || f.request().done ? null : f;
    }

    /**
     * @param token a fragment that stays in flight on its given-up connection, which will answer it
     */
    void hold(long token) {
        Fragment f = byToken == null ? null : byToken.get(token);
        if (f != null && held == null) {
            held = new org.agrona.collections.LongHashSet();
            holding = new ArrayList<>(2);
        }
        if (f != null && held.add(token)) {
            Request r = f.request();
            if (r.held++ == 0) {
                holding.add(r);
            }
        }
    }

    /**
     * @param token a fragment's token
     * @return whether it is held on a given-up connection
     */
    boolean isHeld(long token) {
        return held != null && held.contains(token);
    }

    /**
     * @param epoch a fenced request's epoch
     * @return whether a request of an earlier epoch still waits for a given-up connection's answer:
     *     the request must wait for it, or it could be applied before that copy
     */
    boolean heldBefore(long epoch) {
        for (int i = 0; holding != null && i < holding.size(); i++) {
            Request h = holding.get(i);
            if (h.kind.fenced() && h.epoch < epoch) {
                return true;
            }
        }
        return false;
    }

    /** @return whether any request waits for a given-up connection's answer */
    boolean holding() {
        return holding != null && !holding.isEmpty();
    }

    /** @return whether any fragment is on a lane */
    boolean anyFragments() {
        return byToken != null && !byToken.isEmpty();
    }

    /** @return every fragment on a lane, by token (a live view, for the replay planner) */
    Long2ObjectHashMap<Fragment> fragments() {
        if (byToken == null) {
            byToken = new Long2ObjectHashMap<>();
        }
        return byToken;
    }

    /**
     * The endpoint is ending: every fragment that went out and was not withdrawn (its connection
     * did not revoke it, or an answer was held back for it) marks its request as possibly applied.
     *
     * @param parked tokens that never left their lane's queue
     * @param revocations what the given-up connections said of their copies
     */
    void markMaybeApplied(org.agrona.collections.LongHashSet parked, Revocations revocations) {
        if (byToken == null) {
            return;
        }
        for (Long2ObjectHashMap<Fragment>.EntryIterator it = byToken.entrySet().iterator(); it.hasNext();) {
            it.next();
            long token = it.getLongKey();
            if (!parked.contains(token) && (isHeld(token)
                    || revocations.fate(it.getValue().connectionId(), token) != Revocation.Fate.REVOKED)) {
                it.getValue().request().mayHaveApplied = true;
            }
        }
    }

    /**
     * The endpoint ended: forgets everything.
     *
     * @return the outstanding operations, in order
     */
    List<Request> clear() {
        List<Request> all = new ArrayList<>();
        while (oldestOutstanding != null) {
            all.add(oldestOutstanding);
            unlink(oldestOutstanding);
        }
        byToken = null;
        held = null;
        holding = null;
        all.sort((a, b) -> Long.compare(a.seq, b.seq));
        return all;
    }
}
