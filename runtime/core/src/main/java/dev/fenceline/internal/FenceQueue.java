package dev.fenceline.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.ListIterator;
import java.util.function.ToLongFunction;

/**
 * Requests waiting behind a strong fence: ordered by epoch, FIFO within an epoch (inserting epochs
 * 2, 1, 2 yields 1, 2a, 2b). Epochs mostly arrive in order, so insertion scans from the tail.
 *
 * @param <R> the request type
 */
public final class FenceQueue<R> {
    private final ArrayList<R> items = new ArrayList<>();
    private final ToLongFunction<R> epochOf;
    private int maxDepth;

    /** @param epochOf reads a request's captured epoch */
    public FenceQueue(ToLongFunction<R> epochOf) {
        this.epochOf = epochOf;
    }

    /** @param request appended after every request of the same or an earlier epoch */
    public void add(R request) {
        long e = epochOf.applyAsLong(request);
        int i = items.size();
        while (i > 0 && epochOf.applyAsLong(items.get(i - 1)) > e) {
            i--;
        }
        items.add(i, request);
        maxDepth = Math.max(maxDepth, items.size());
    }

    /** @param request put back at the head, where it was taken from */
    public void pushFront(R request) {
        items.add(0, request);
    }

    /** @return the head, or null */
    public R peek() {
        return items.isEmpty() ? null : items.get(0);
    }

    /** @return the head, removed, or null */
    public R poll() {
        return items.isEmpty() ? null : items.remove(0);
    }

    /** @return whether no request waits */
    public boolean isEmpty() {
        return items.isEmpty();
    }

    /** @return how many requests wait */
    public int size() {
        return items.size();
    }

    /** @return the deepest the queue has been */
    public int maxDepth() {
        return maxDepth;
    }

    /**
     * @param test a predicate
     * @return whether any waiting request matches
     */
    public boolean any(java.util.function.Predicate<R> test) {
        for (R r : items) {
            if (test.test(r)) {
                return true;
            }
        }
        return false;
    }

    /** @return every waiting request, in order; the queue is left empty */
    public List<R> removeAll() {
        List<R> all = new ArrayList<>(items);
        items.clear();
        return all;
    }

    /** @return the waiting requests in order (a copy) */
    public List<R> snapshot() {
        List<R> copy = new ArrayList<>(items.size());
        for (ListIterator<R> it = items.listIterator(); it.hasNext();) {
            copy.add(it.next());
        }
        return copy;
    }
}
