package dev.fenceline.spi.support;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A bound on the dedup entries a group of windows holds together (one peer's, or a whole
 * target's), optionally inside a wider one: an entry counts against this budget and its parent,
 * and is granted only if both have room. Thread-safe and lock-free.
 */
public final class DedupBudget implements DedupWindow.Budget {
    private final String description;
    private final long limit;
    private final DedupBudget parent;
    private final AtomicLong used = new AtomicLong();

    /**
     * @param description names the bound in refusals, e.g. {@code limits.dedup-entries-per-peer = 2097152
     *     for peer CN=node-1}
     * @param limit the most entries held at once
     * @param parent the wider budget these entries also count against, or null
     */
    public DedupBudget(String description, long limit, DedupBudget parent) {
        if (limit < 0) {
            throw new IllegalArgumentException("a budget of " + limit + " entries");
        }
        this.description = description;
        this.limit = limit;
        this.parent = parent;
    }

    @Override
    public boolean reserve(int entries) {
        if (entries < 0) {
            throw new IllegalArgumentException("reserve " + entries);
        }
        long now = used.addAndGet(entries);
        if (now > limit) {
            used.addAndGet(-entries);
            return false;
        }
        if (parent != null && !parent.reserve(entries)) {
            used.addAndGet(-entries);
            return false;
        }
        return true;
    }

    @Override
    public void release(int entries) {
        used.addAndGet(-entries);
        if (parent != null) {
            parent.release(entries);
        }
    }

    @Override
    public String describe() {
        String mine = description + ": " + used.get() + " of " + limit + " entries held";
        return parent == null ? mine : mine + "; " + parent.describe();
    }

    /** @return the entries held now */
    public long used() {
        return used.get();
    }

    /** @return the most entries held at once */
    public long limit() {
        return limit;
    }
}
