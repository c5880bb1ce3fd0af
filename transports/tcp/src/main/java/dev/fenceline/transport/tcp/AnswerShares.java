package dev.fenceline.transport.tcp;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How a transport's authenticated incoming connections share {@code limits.queued-bytes-total}:
 * each may leave its even share of answers unread ({@link TcpSettings.Limits#queueMark}). A
 * connection looks at its share before each frame it applies; one that applies none (it went quiet
 * with answers queued) is told when the share has fallen by a quarter since they were last all
 * told, so that it too pauses and must drain within the unread timeout. Telling all of them only
 * at such steps keeps the work of n connects at O(n log n), and what a quiet connection that was
 * not told may hold within 4/3 of its share. Any thread.
 */
final class AnswerShares {
    /** A connection that shares the total. */
    interface Member {
        /** Its share fell: it looks at what it holds (on its own thread: this is called from any). */
        void shareFell();
    }

    private final TcpSettings.Limits limits;
    private final Set<Member> members = ConcurrentHashMap.newKeySet();
    private final AtomicInteger count = new AtomicInteger();
    /** The share all members were last told of (guarded by this). */
    private int told;

    /** @param limits the transport's limits */
    AnswerShares(TcpSettings.Limits limits) {
        this.limits = limits;
        this.told = limits.queueMark(1);
    }

    /** A connection authenticated: it shares the total from now on. */
    void joined(Member m) {
        if (!members.add(m)) {
            return;
        }
        boolean tell;
        synchronized (this) { // the count and what was told move together (joins and leaves are rare)
            int share = limits.queueMark(count.incrementAndGet());
            tell = share <= told - told / 4;
            if (tell) {
                told = share;
            }
        }
        if (tell) {
            for (Member o : members) {
                o.shareFell();
            }
        }
    }

    /** A connection that {@link #joined} closed. */
    void left(Member m) {
        if (members.remove(m)) {
            synchronized (this) {
                // A later fall is measured from where the share is now.
                told = Math.max(told, limits.queueMark(count.decrementAndGet()));
            }
        }
    }

    /** @return the connections sharing the total now */
    int count() {
        return count.get();
    }

    /** @return the answer bytes each of {@code n} sharing connections may leave unread */
    int share(int n) {
        return limits.queueMark(n);
    }
}
