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
     * @param notApplied whether a call failed saying it was not and will not be applied: its bytes
     *     are no get's to read
     */
    static void check(List<Op> ops, Op g, byte[] read, List<String> bad, BiPredicate<Op, Op> before,
            boolean notAfter, Predicate<Op> failed, Predicate<Op> notApplied) {
        // Only puts that overlap the get matter: collect them once, in issue order. Bytes an atomic
        // touches are not modelled here (an ADD changes them without writing any put's bytes).
        List<Op> overlapping = new ArrayList<>();
        List<Op> atomics = new ArrayList<>();
        for (Op a : ops) {
            if (a.address() < g.address() + g.length() && g.address() < a.address() + a.length()) {
                if (a.kind() == Op.Kind.PUT) {
                    overlapping.add(a);
                } else if (a.isAdd() || a.kind() == Op.Kind.OTHER_ATOMIC) {
                    atomics.add(a);
                }
            }
        }
        if (overlapping.isEmpty()) {
            return;
        }
        List<Op> cover = new ArrayList<>();
        for (int i = 0; i < g.length(); i++) {
            long p = g.address() + i;
            if (coveredByAny(atomics, p)) {
                continue;
            }
            cover.clear();
            Op latest = null; // the last issued put ordered before the get that covers p, for the report
            for (Op a : overlapping) {
                if (covers(a, p)) {
                    cover.add(a);
                    if (a.id() < g.id() && before.test(a, g) && !failed.test(a)) {
                        latest = a;
                    }
                }
            }
            boolean allowed = false;
            boolean newer = false;
            Op refused = null; // a put that failed as not applied and wrote what was read
            if (latest == null) { // the initial value, or a put not ordered after the get
                allowed = !notAfter || initialMayBe(g, overlapping, p, read[i], before, notApplied);
                newer = !allowed;
                if (allowed) {
                    refused = onlyRefusedWrote(overlapping, p, read[i], notApplied);
                    allowed = refused == null;
                }
            }
            // A put may be the source unless the get is ordered before it, or another put that did
            // not fail is ordered after it and before the get (two puts unordered with each other,
            // both before the get, may land either way round).
            for (int k = 0; k < cover.size() && !allowed; k++) {
                Op q = cover.get(k);
                if (q.data()[(int) (p - q.address())] != read[i]) {
                    continue;
                }
                if (notApplied.test(q)) {
                    refused = q;
                    continue;
                }
                if (notAfter && before.test(g, q)) {
                    newer = true;
                    continue;
                }
                allowed = !superseded(q, cover, g, before, failed);
            }
            if (!allowed && refused != null && !newer) {
                bad.add("get #" + g.id() + " read byte 0x" + Long.toHexString(p) + " written by put #" + refused.id()
                        + ", which failed as not applied");
                return;
            }
            if (!allowed) {
                bad.add(newer || latest == null ? "get #" + g.id() + " read byte 0x" + Long.toHexString(p)
                        + " written by a put ordered after it" : "get #" + g.id() + " read byte 0x"
                        + Long.toHexString(p) + " older than put #" + latest.id() + ", which was ordered before it");
                return; // one report per get
            }
        }
    }

    /** Whether a put that did not fail covers the byte too and is ordered after {@code q} and before the get. */
    private static boolean superseded(Op q, List<Op> cover, Op g, BiPredicate<Op, Op> before, Predicate<Op> failed) {
        for (Op r : cover) {
            if (r != q && r.id() < g.id() && before.test(q, r) && before.test(r, g) && !failed.test(r)) {
                return true;
            }
        }
        return false;
    }

    /**
     * With no put ordered before the get covering {@code p}: whether {@code value} may be what it
     * read, that is, the memory's first value or what a put not ordered after the get wrote.
     * Unknown first contents (not recorded) allow anything but a match with only later puts.
     */
    private static boolean initialMayBe(Op g, List<Op> overlapping, long p, byte value, BiPredicate<Op, Op> before,
            Predicate<Op> notApplied) {
        boolean matchesAfter = false;
        for (Op q : overlapping) {
            if (!covers(q, p) || q.data()[(int) (p - q.address())] != value || notApplied.test(q)) {
                continue;
            }
            if (!before.test(g, q)) {
                return true; // an unordered put may have written it
            }
            matchesAfter = true;
        }
        return !matchesAfter || value == 0; // the first value (memory starts zeroed), or no put's byte at all
    }

    /**
     * With no put ordered before the get covering {@code p}: a put that failed as not applied, if
     * {@code value} is its byte and no put that may have been applied (nor the zeroed first value)
     * explains it; else null. Unknown first contents could hold any byte, but one that only a refused
     * put wrote is taken for that put's, as {@link #initialMayBe} takes one only a later put wrote.
     */
    private static Op onlyRefusedWrote(List<Op> overlapping, long p, byte value, Predicate<Op> notApplied) {
        if (value == 0) {
            return null;
        }
        Op refused = null;
        for (Op q : overlapping) {
            if (covers(q, p) && q.data()[(int) (p - q.address())] == value) {
                if (!notApplied.test(q)) {
                    return null;
                }
                refused = q;
            }
        }
        return refused;
    }

    private static boolean coveredByAny(List<Op> atomics, long p) {
        for (Op a : atomics) {
            if (covers(a, p)) {
                return true;
            }
        }
        return false;
    }

    private static boolean covers(Op put, long p) {
        return put.address() <= p && p < put.address() + put.length();
    }
}
