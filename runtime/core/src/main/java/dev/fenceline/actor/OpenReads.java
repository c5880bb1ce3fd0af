package dev.fenceline.actor;

import org.agrona.collections.Long2LongHashMap;

/**
 * The gets an endpoint posted that are not answered yet, counted by epoch. Work of a later epoch
 * (but gets, which a read cannot disturb) waits until they are answered, like a write behind an
 * RDMA fence waits for the reads before it: a lane's in-order delivery does not make a read's
 * answer arrive before the write after it lands, and a read whose answer is lost with its lane
 * could only be read again after that write, seeing data newer than its fence allows. Not
 * thread-safe: the endpoint actor owns the table of the gets it posts ({@link InflightTable}); the
 * {@link DirectLedger} keeps one for the gets calling threads post, under its own lock. No
 * allocation per get.
 */
final class OpenReads {
    /** Null until the first get: an endpoint that never reads does not hold the table. */
    private Long2LongHashMap open;
    private long oldest = Long.MAX_VALUE;

    /** @param epoch a get of this epoch was posted */
    void opened(long epoch) {
        if (open == null) {
            open = new Long2LongHashMap(0);
        }
        open.put(epoch, open.get(epoch) + 1);
        oldest = Math.min(oldest, epoch);
    }

    /**
     * @param epoch a get of this epoch was answered, or failed
     * @return whether the oldest open epoch moved on (work waiting for it may go)
     */
    boolean closed(long epoch) {
        long left = open.get(epoch) - 1;
        if (left > 0) {
            open.put(epoch, left);
            return false;
        }
        open.remove(epoch);
        if (epoch != oldest) {
            return false;
        }
        long min = Long.MAX_VALUE;
        for (Long2LongHashMap.KeyIterator it = open.keySet().iterator(); it.hasNext();) {
            min = Math.min(min, it.nextValue());
        }
        oldest = min;
        return true;
    }

    /**
     * @param epoch a request's epoch
     * @return whether a get of an earlier epoch is still unanswered
     */
    boolean before(long epoch) {
        return oldest < epoch;
    }

    /** @return the oldest epoch with a get still open ({@link Long#MAX_VALUE}: none) */
    long oldest() {
        return oldest;
    }
}
