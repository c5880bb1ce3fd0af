package dev.fenceline.testkit.history;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiPredicate;
import java.util.function.Predicate;

/**
 * What a get may have read, byte by byte: for {@link HistoryChecker}, which checks reads against
 * the puts ordered before them (and, for fences, not after them).
 */
final class GetReads {
    private GetReads() {
    }

    /**
     * @param ops the history's calls, in issue order
     * @param g a get that completed
     * @param read what it read
     * @param bad where a violation is reported (one per get)
     * @param before the order the get must observe
     * @param notAfter whether it must also not see what a put ordered after it wrote
     * @param failed whether a call failed
     */
    static void check(List<Op> ops, Op g, byte[] read, List<String> bad, BiPredicate<Op, Op> before,
            boolean notAfter, Predicate<Op> failed) {
        // Only puts that overlap the get matter: collect them once, in issue order.
        List<Op> overlapping = new ArrayList<>();
        for (Op a : ops) {
            if (a.kind() == Op.Kind.PUT && a.address() < g.address() + g.length()
                    && g.address() < a.address() + a.length()) {
                overlapping.add(a);
            }
        }
        if (overlapping.isEmpty()) {
            return;
        }
        for (int i = 0; i < g.length(); i++) {
            long p = g.address() + i;
            int latest = -1;
            for (int k = 0; k < overlapping.size(); k++) {
                Op a = overlapping.get(k);
                if (a.id() >= g.id()) {
                    break;
                }
                if (before.test(a, g) && covers(a, p) && !failed.test(a)) {
                    latest = k;
                }
            }
            boolean allowed = latest < 0 && !notAfter;
            boolean newer = false;
            if (latest < 0 && notAfter) { // the initial value, or a put not ordered after the get
                allowed = initialMayBe(g, overlapping, p, read[i], before);
                newer = !allowed;
            }
            for (int k = Math.max(latest, 0); k < overlapping.size() && !allowed; k++) {
                Op q = overlapping.get(k);
                boolean source = covers(q, p) && q.data()[(int) (p - q.address())] == read[i];
                allowed = source && !(notAfter && before.test(g, q));
                newer |= source && !allowed;
            }
            if (!allowed) {
                bad.add(newer ? "get #" + g.id() + " read byte 0x" + Long.toHexString(p) + " written by a put"
                        + " ordered after it" : "get #" + g.id() + " read byte 0x" + Long.toHexString(p)
                        + " older than put #" + overlapping.get(latest).id() + ", which was ordered before it");
                return; // one report per get
            }
        }
    }

    /**
     * With no put ordered before the get covering {@code p}: whether {@code value} may be what it
     * read, that is, the memory's first value or what a put not ordered after the get wrote.
     * Unknown first contents (not recorded) allow anything but a match with only later puts.
     */
    private static boolean initialMayBe(Op g, List<Op> overlapping, long p, byte value, BiPredicate<Op, Op> before) {
        boolean matchesAfter = false;
        for (Op q : overlapping) {
            if (!covers(q, p) || q.data()[(int) (p - q.address())] != value) {
                continue;
            }
            if (!before.test(g, q)) {
                return true; // an unordered put may have written it
            }
            matchesAfter = true;
        }
        return !matchesAfter || value == 0; // the first value (memory starts zeroed), or no put's byte at all
    }

    private static boolean covers(Op put, long p) {
        return put.address() <= p && p < put.address() + put.length();
    }
}
