package dev.fenceline.actor;

import dev.fenceline.actor.EndpointCounters.Counter;
import dev.fenceline.spi.LaneConnection;

/**
 * Requests calling threads posted on a lane that ended before answering, taken back by the actor
 * together ({@link #takeBack}): each becomes an outstanding request on that lane's old connection,
 * which the replay restarts under its sequence number (or fails, with the outcome its lane's end
 * allows). The direct ledger counts them answered once all of them are retired, since restarted
 * ones complete in any order. Actor-owned.
 */
final class TakenBack {
    private final DirectLedger ledger;
    /** How many were taken back together, and how many of those are not retired yet. */
    private int count;
    private int left;

    private TakenBack(DirectLedger ledger) {
        this.ledger = ledger;
    }

    /**
     * Takes back everything the endpoint's lanes gave back so far, in the order given (their
     * numbering order). Call as a reconfiguration starts and as the endpoint ends, after the ended
     * connections were closed or aborted (they give their posted requests back as they end).
     *
     * @param ledger the endpoint's direct ledger, where lanes left them
     * @param inflight where they become outstanding
     * @param counters the actor's counters, which count them from now on
     * @return how many were taken back
     */
    static int takeBack(DirectLedger ledger, InflightTable inflight, EndpointCounters counters) {
        PostedRequest p = ledger.pollReturned();
        if (p == null) {
            return 0;
        }
        TakenBack batch = new TakenBack(ledger);
        for (; p != null; p = ledger.pollReturned()) {
            Request r = p.request;
            LaneConnection conn = p.connection();
            r.lane = p.slot();
            r.fragmentSize = r.local == null ? 0 : Math.max(1, r.local.remaining());
            r.takenBack = batch;
            batch.left++;
            batch.count++;
            counters.increment(Counter.OPERATIONS);
            inflight.adopt(r, p.op().token(), new InflightTable.Fragment(r, 0, r.lane, conn.id(),
                    conn.exactlyOnceScope()));
        }
        ledger.took(batch.count);
        return batch.count;
    }

    /**
     * After a request's completion: a request taken back counts as answered once all of its batch
     * are.
     *
     * @param r a request the actor completed
     */
    static void completed(Request r) {
        TakenBack b = r.takenBack;
        if (b != null) {
            r.takenBack = null;
            if (--b.left == 0) {
                b.ledger.adoptedRetired(b.count);
            }
        }
    }
}
