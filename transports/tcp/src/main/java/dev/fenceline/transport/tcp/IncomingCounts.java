package dev.fenceline.transport.tcp;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Incoming connections open now, in all and by source address, against the transport's limits. An
 * address is remembered only while it has a connection open: a peer that connects once from each of
 * many addresses (an IPv6 prefix holds billions) leaves nothing behind. Any thread.
 */
final class IncomingCounts {
    private final int most;
    private final int mostPerAddress;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, Integer> byAddress = new ConcurrentHashMap<>();

    /**
     * @param most the most connections open at once
     * @param mostPerAddress the most from one address
     */
    IncomingCounts(int most, int mostPerAddress) {
        this.most = most;
        this.mostPerAddress = mostPerAddress;
    }

    /**
     * What was open when a connection was refused.
     *
     * @param inAll connections open in all
     * @param fromAddress connections open from its address
     */
    record Refusal(int inAll, int fromAddress) {
    }

    /**
     * Counts a connection from {@code from} if both limits allow it.
     *
     * @param from its source address
     * @return null if it was counted (count it off with {@link #closed} when it closes), else what
     *     was open without it
     */
    Refusal admit(InetAddress from) {
        int all = total.incrementAndGet();
        int[] mine = new int[1];
        byAddress.compute(from, (a, n) -> {
            mine[0] = n == null ? 1 : n + 1;
            return mine[0];
        });
        if (all <= most && mine[0] <= mostPerAddress) {
            return null;
        }
        closed(from);
        return new Refusal(all - 1, mine[0] - 1);
    }

    /**
     * Counts a connection from {@code from} over the limit in all: one still handshaking was closed to
     * make room, and is counted off when its close completes.
     *
     * @param from its source address
     */
    void admitInPlaceOfAnother(InetAddress from) {
        total.incrementAndGet();
        byAddress.merge(from, 1, Integer::sum);
    }

    /** A counted connection from {@code from} closed (or was refused after all). */
    void closed(InetAddress from) {
        total.decrementAndGet();
        byAddress.computeIfPresent(from, (a, n) -> n <= 1 ? null : n - 1);
    }

    /** @return the addresses with a connection open */
    int addresses() {
        return byAddress.size();
    }

    /** @return the connections open */
    int open() {
        return total.get();
    }
}
