package dev.fenceline.spi.support;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * A worker's exactly-once windows, shared by all its transports: one per (peer worker, what it
 * proved, origin endpoint). A copy of an operation re-sent over another lane, of this transport or
 * another, reaches the window its first copy reached, and is recognized (answered with the first
 * copy's outcome, never applied twice, never applied late). The lanes whose copies reach one window
 * report the same {@link ExactlyOnceScope}.
 *
 * <p>A transport retains an origin's window for each connection that carries that origin's operations
 * and releases it when the connection ends; a window outlives its last holder by the linger, long
 * enough for the origin to fail over and send its uncertain copies again, and stays while an active
 * message's handler it let run has not returned. What one peer's windows
 * hold together is bounded, and so is what all hold: a window the bounds cannot hold is refused
 * ({@link #retain} returns null) and the operation with it, and every other peer is unaffected.
 *
 * <p>Windows are keyed by what a peer proved at wireup, not only by the ids it names: under TLS its
 * certificate's subject ({@link #MEMBER} otherwise: a process of this host's user, or a holder of the
 * cluster's shared secret, who may act as any member anyway), so a peer can never reach the windows
 * of a peer that proved more. Thread-safe; hold a window's {@link DedupWindow} lock while applying
 * through it (transports' threads share it).
 */
public final class ExactlyOnceWindows {
    /** The proof of a peer that proved membership only (this host's user, or the shared secret). */
    public static final String MEMBER = "";

    /** Whose window. */
    private record Key(UUID peer, String proof, long origin) {
    }

    /**
     * Whose budget: under TLS the certificate's subject, whatever worker ids its holder names (it may
     * name any, so a budget per id would multiply with them); otherwise the worker id.
     */
    private record Owner(UUID peer, String proof) {
        /** Stands for every worker id one TLS subject names. */
        private static final UUID ANY_WORKER = new UUID(0, 0);

        static Owner of(UUID peer, String proof) {
            return new Owner(proof.isEmpty() ? peer : ANY_WORKER, proof);
        }
    }

    /** One origin's window, and who holds it. */
    public static final class Window {
        private final Key key;
        private final DedupWindow window;
        private int holders;
        private long idleSince;

        private Window(Key key, DedupWindow window) {
            this.key = key;
            this.window = window;
        }

        /** @return the window; hold its lock while applying through it */
        public DedupWindow window() {
            return window;
        }

        /** @return the origin endpoint it belongs to */
        public long origin() {
            return key.origin;
        }
    }

    private final ExactlyOnce exactlyOnce;
    private final int windowSize;
    private final long lingerNanos;
    private final long perPeer;
    private final DedupBudget total;
    private final LongSupplier nanoTime;
    private final Map<Key, Window> windows = new HashMap<>();
    private final Map<Owner, DedupBudget> budgets = new HashMap<>();
    /**
     * The windows no connection holds, each once, in the order of their last release (a window
     * retained leaves it; released again, it goes to the back): oldest first, so expiry stops at
     * the first that is not due.
     */
    private final java.util.LinkedHashSet<Window> idle = new java.util.LinkedHashSet<>();
    /** The most refused peer workers remembered; the oldest refusal is forgotten past it. */
    static final int MAX_REFUSED = 65_536;
    /** Peer workers refused ({@link #refuse}), and why, oldest first. */
    private final Map<UUID, String> refused = new java.util.LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<UUID, String> eldest) {
            return size() > MAX_REFUSED;
        }
    };

    /**
     * @param target names the worker in refusals
     * @param windowSize how far past its oldest incomplete operation one origin may run
     * @param linger how long a window outlives its last holder
     * @param perPeer the most entries one peer's windows hold together
     * @param total the most entries all windows hold together
     * @param nanoTime the clock
     */
    public ExactlyOnceWindows(String target, int windowSize, Duration linger, long perPeer, long total,
            LongSupplier nanoTime) {
        this.exactlyOnce = new ExactlyOnce(target, windowSize);
        this.windowSize = windowSize;
        this.lingerNanos = linger.toNanos();
        this.perPeer = perPeer;
        this.total = new DedupBudget("fenceline.exactly-once.entries = " + total, total, null);
        this.nanoTime = nanoTime;
    }

    /** @return how far past its oldest incomplete operation one origin may run */
    public int windowSize() {
        return windowSize;
    }

    /** @return what applies operations through the windows */
    public ExactlyOnce exactlyOnce() {
        return exactlyOnce;
    }

    /**
     * A connection starts carrying operations of {@code origin}. Its window draws on the budget of
     * {@code proof} if it is a TLS subject (one for all the worker ids the subject's holders name),
     * else on {@code peer}'s.
     *
     * @param peer the peer worker
     * @param proof what it proved beyond its worker id ({@link #MEMBER}, or its TLS subject)
     * @param origin its origin endpoint
     * @return the window, retained; or null if the peer's or the worker's bound cannot hold another
     */
    public synchronized Window retain(java.util.UUID peer, String proof, long origin) {
        expire();
        Key key = new Key(peer, proof, origin);
        Window w = windows.get(key);
        if (w == null) {
            Owner owner = Owner.of(peer, proof);
            DedupBudget budget = budgets.computeIfAbsent(owner, o -> new DedupBudget(
                    "fenceline.exactly-once.entries-per-peer = " + perPeer + " for " + describe(o), perPeer, total));
            DedupWindow made = exactlyOnce.newWindow(budget, nanoTime);
            if (made == null) {
                if (budget.used() == 0) {
                    budgets.remove(owner);
                }
                return null;
            }
            String why = refused.get(peer);
            if (why != null) {
                made.refuse(why);
            }
            w = new Window(key, made);
            windows.put(key, w);
        }
        if (w.holders++ == 0) {
            idle.remove(w);
        }
        return w;
    }

    /**
     * Refuses a peer worker from now on: every operation of its origins that a window has not
     * applied before is answered with an {@link dev.fenceline.EndpointFailedException}, under
     * whatever proof it connects, over every transport that applies through these windows. The
     * latest {@link #MAX_REFUSED} refusals are remembered. Does not take any window's lock.
     *
     * @param peer the peer worker
     * @param why why, for the refusals (e.g. its cluster member was downed)
     * @return whether it was not refused already
     */
    public synchronized boolean refuse(UUID peer, String why) {
        java.util.Objects.requireNonNull(why, "why");
        boolean fresh = refused.put(peer, why) == null;
        for (Window w : windows.values()) {
            if (w.key.peer().equals(peer)) {
                w.window.refuse(why);
            }
        }
        return fresh;
    }

    /**
     * @param peer a peer worker
     * @return whether it is refused
     */
    public synchronized boolean refuses(UUID peer) {
        return refused.containsKey(peer);
    }

    private static String describe(Owner o) {
        return o.proof().isEmpty() ? "worker " + o.peer() : "TLS subject " + o.proof() + " (every worker id it names)";
    }

    /**
     * The connection that retained {@code w} ended: once no connection holds it, it goes after the linger.
     *
     * @param w a window from {@link #retain}
     */
    public synchronized void release(Window w) {
        if (w.holders > 0 && --w.holders == 0) {
            w.idleSince = nanoTime.getAsLong();
            idle.add(w);
        }
        expire();
    }

    /**
     * Drops the windows idle for longer than the linger, oldest first. One whose handler still runs
     * (it outlived its connection and the linger) stays for another linger from now: dropped, a copy
     * sent meanwhile would find a fresh window and run the handler a second time.
     */
    private void expire() {
        long now = nanoTime.getAsLong();
        java.util.List<Window> stillRunning = null;
        for (java.util.Iterator<Window> it = idle.iterator(); it.hasNext();) {
            Window w = it.next();
            if (now - w.idleSince < lingerNanos) {
                break;
            }
            it.remove();
            if (w.window.running()) {
                if (stillRunning == null) {
                    stillRunning = new java.util.ArrayList<>(2);
                }
                stillRunning.add(w);
                continue;
            }
            if (windows.remove(w.key, w)) {
                w.window.release();
                Owner owner = Owner.of(w.key.peer(), w.key.proof());
                DedupBudget b = budgets.get(owner);
                if (b != null && b.used() == 0) {
                    budgets.remove(owner);
                }
            }
        }
        if (stillRunning != null) {
            for (Window w : stillRunning) {
                w.idleSince = now;
                idle.add(w); // at the back: the queue stays in order of idleSince
            }
        }
    }

    /** @return how many windows are idle (for tests) */
    synchronized int idleEntries() {
        return idle.size();
    }

    /** @return how many windows a connection holds now (not counting those that linger) */
    public synchronized int held() {
        return windows.size() - idle.size();
    }

    /** @return how many windows are held or lingering */
    public synchronized int size() {
        expire();
        return windows.size();
    }

    /** @return how many dedup entries all windows hold together */
    public long entries() {
        return total.used();
    }
}
