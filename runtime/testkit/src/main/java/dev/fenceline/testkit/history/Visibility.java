package dev.fenceline.testkit.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the runtime reported of one call, per fragment.
 *
 * @param first order of its first VISIBLE event (Long.MAX_VALUE: none)
 * @param complete order at which its last fragment was first applied (re-applications of a
 *     restarted fragment do not count: the fragment was visible from its first application)
 * @param expected the fragments admitted on lanes that report visibility
 * @param visibleAt the order at which each fragment was first applied
 * @param appliedTwice a fragment applied twice where that is a violation, or Long.MIN_VALUE
 * @param applications the order of every VISIBLE event, re-applications included, ascending
 * @param admissions the order of every ADMITTED event (each restart admits again), ascending
 */
record Visibility(long first, long complete, java.util.Set<Long> expected, Map<Long, Long> visibleAt,
        long appliedTwice, long[] applications, long[] admissions) {
    /** @return the order of its last application, or Long.MIN_VALUE */
    long last() {
        return applications.length == 0 ? Long.MIN_VALUE : applications[applications.length - 1];
    }

    /**
     * @param after an order
     * @return an application later than {@code after} with no admission between the two, else
     *     Long.MIN_VALUE
     */
    long unexplainedAfter(long after) {
        for (long t : applications) {
            if (t <= after) {
                continue;
            }
            boolean resent = false;
            for (long adm : admissions) {
                resent |= adm > after && adm < t;
            }
            if (!resent) {
                return t;
            }
        }
        return Long.MIN_VALUE;
    }

    static Visibility of(Op op, List<Event> events) {
        java.util.Set<Long> expected = new java.util.HashSet<>();
        java.util.Set<Long> resendable = new java.util.HashSet<>(); // admitted at least once without dedup
        Map<Long, Long> visibleAt = new HashMap<>();
        Map<Long, Integer> applied = new HashMap<>();
        List<Long> applications = new ArrayList<>();
        List<Long> admissions = new ArrayList<>();
        for (Event e : events) {
            if (e.kind() == Event.Kind.ADMITTED) {
                admissions.add(e.order());
                if (e.visibilityReported()) {
                    expected.add(e.sequence());
                }
                if (!e.deduplicated()) {
                    resendable.add(e.sequence());
                }
            } else if (e.kind() == Event.Kind.VISIBLE) {
                applications.add(e.order());
                visibleAt.putIfAbsent(e.sequence(), e.order());
                applied.merge(e.sequence(), 1, Integer::sum);
            }
        }
        // A read has no effect, and no transport deduplicates one: a restarted get is read again
        // (what it may then return is assertFencesHeld's to check). A lane without deduplication
        // re-sends a restarted put (idempotent); an atomic or a message applied twice is always wrong.
        boolean reread = op.kind() == Op.Kind.GET;
        long twice = Long.MIN_VALUE;
        for (Map.Entry<Long, Integer> a : applied.entrySet()) {
            if (a.getValue() > 1 && !reread && !(op.kind() == Op.Kind.PUT && resendable.contains(a.getKey()))) {
                twice = a.getKey();
            }
        }
        long first = visibleAt.values().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
        long complete = visibleAt.values().stream().mapToLong(Long::longValue).max().orElse(Long.MIN_VALUE);
        return new Visibility(first, complete, expected, visibleAt, twice,
                applications.stream().mapToLong(Long::longValue).sorted().toArray(),
                admissions.stream().mapToLong(Long::longValue).sorted().toArray());
    }

    /** @return whether every expected fragment was applied (and at least one was) */
    boolean seen() {
        return first != Long.MAX_VALUE && visibleAt.keySet().containsAll(expected);
    }

    /** @return an expected fragment not applied before {@code order}, or null */
    String notVisibleBy(long order) {
        for (long sn : expected) {
            Long at = visibleAt.get(sn);
            if (at == null || at > order) {
                return sn < 0 ? "it" : "fragment " + sn;
            }
        }
        return null;
    }

    /** @return an expected fragment never applied, or null */
    String neverApplied() {
        for (long sn : expected) {
            if (!visibleAt.containsKey(sn)) {
                return sn < 0 ? "it" : "fragment " + sn;
            }
        }
        return null;
    }
}
