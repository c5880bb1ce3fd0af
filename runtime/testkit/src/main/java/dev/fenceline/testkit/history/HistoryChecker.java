package dev.fenceline.testkit.history;

import dev.fenceline.FencelineException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongUnaryOperator;

/**
 * Checks a {@link History} for Fenceline's guarantees, from what the application observed. Each
 * assertion throws an {@link AssertionError} that names the calls involved (by issue order).
 *
 * <p>What is modelled: words that only ever receive ADDs (posted or fetched) with non-negative
 * operands, and puts and gets. Fences are those issued on the recorded endpoint by the same thread
 * (program order); a worker-wide fence is not recorded.
 *
 * <p>Where the history holds {@link Event.Kind#VISIBLE} events (the {@code sim} transport and the
 * fast path report them), the assertions also check the order in which the target applied the
 * calls, which catches a broken fence or flush even when no later read happens to observe it, and
 * an operation applied twice even when its word is not modelled.
 */
public final class HistoryChecker {
    private final History history;
    private final List<Op> ops;
    private final Map<Long, Long> initial = new HashMap<>();

    private HistoryChecker(History history) {
        this.history = history;
        this.ops = history.ops();
    }

    /**
     * @param history the record
     * @return a checker over it
     */
    public static HistoryChecker of(History history) {
        return new HistoryChecker(history);
    }

    /**
     * @param address a word's address
     * @param value its value before the history began (0 when not given)
     * @return this
     */
    public HistoryChecker initially(long address, long value) {
        initial.put(address, value);
        return this;
    }

    /**
     * Every call completed, successfully or with a typed {@link FencelineException}.
     *
     * @return this
     */
    public HistoryChecker assertEveryRequestCompleted() {
        List<String> bad = new ArrayList<>();
        for (Op op : ops) {
            if (op.kind() == Op.Kind.FENCE) {
                continue;
            }
            Outcome o = history.outcome(op);
            if (o == null) {
                bad.add("#" + op.id() + " " + op.kind() + " never completed");
            } else if (o.error() != null && !(o.error() instanceof FencelineException)) {
                bad.add("#" + op.id() + " " + op.kind() + " failed with an untyped " + o.error());
            }
        }
        return fail("every request completes", bad);
    }

    /**
     * A successful flush completed only after every call its thread issued before it on that endpoint,
     * and, where visibility is recorded, only after the target applied every fragment of them; and
     * no put or atomic issued before it, whatever its outcome, was applied after it completed (a
     * late copy would land over what the application writes once the flush returned).
     *
     * @return this
     */
    public HistoryChecker assertFlushesCovered() {
        List<String> bad = new ArrayList<>();
        for (Op f : ops) {
            Outcome fo = history.outcome(f);
            if (f.kind() != Op.Kind.FLUSH || fo == null || !fo.ok()) {
                continue;
            }
            for (Op r : ops) {
                if (r.id() >= f.id()) {
                    break;
                }
                if (r.endpoint() != f.endpoint() || r.thread() != f.thread() || r.kind() == Op.Kind.FENCE) {
                    continue;
                }
                Outcome ro = history.outcome(r);
                if (ro == null || ro.completionOrder() > fo.completionOrder()) {
                    bad.add("flush #" + f.id() + " completed before #" + r.id() + " " + r.kind() + " issued before it");
                } else if (r.kind() != Op.Kind.FLUSH) {
                    String missing = ro.ok() ? visibility(r).notVisibleBy(completed(f)) : null;
                    // A get has no effect; a message is ordered by nothing but its lane (one abandoned
                    // with its lane may still run, late, after a flush that completed: see architecture.md).
                    long late = r.kind() == Op.Kind.GET || r.kind() == Op.Kind.MESSAGE ? Long.MIN_VALUE
                            : visibility(r).unexplainedAfter(completed(f));
                    if (missing != null) {
                        bad.add("flush #" + f.id() + " completed before the target applied " + missing + " of #"
                                + r.id() + " " + r.kind() + " issued before it");
                    } else if (late != Long.MIN_VALUE) {
                        bad.add("#" + r.id() + " " + r.kind() + " (" + (ro.ok() ? "completed" : "failed") + "), issued"
                                + " before flush #" + f.id() + ", was applied after the flush completed: a stale copy");
                    }
                }
            }
        }
        return fail("flushes cover what was issued before them", bad);
    }

    /**
     * Nothing issued after a fence was applied before what its thread issued before the fence on
     * that endpoint: a fetched ADD sees every ADD fenced before it, and a get sees every put fenced
     * before it (or something written later), but nothing a put fenced after it wrote. Where visibility is recorded, the target applied every
     * fragment fenced before a fence before it applied any fragment issued after it.
     *
     * @return this
     */
    public HistoryChecker assertFencesHeld() {
        List<String> bad = ordered(HistoryChecker::fencedBefore, true);
        bad.addAll(fencedVisibility());
        return fail("fences hold", bad);
    }

    /**
     * Per endpoint and thread: everything fenced before a fence was applied at the target before
     * anything issued after it was (calls with visibility events only). A later application of an
     * earlier call counts too: after a call fenced behind it was applied, an earlier call may be
     * applied again only as a copy the endpoint re-sent after that (a restart, which re-sends the
     * later call behind it as well); one without such a re-sending is a stale copy from a lane the
     * endpoint gave up, and a put re-sent alone, so that its bytes end over a later write it
     * overlaps, broke the fence as well. Calls that failed count as well: if a copy of one was
     * applied, it had to be in order.
     */
    private List<String> fencedVisibility() {
        List<String> bad = new ArrayList<>();
        Map<String, java.util.TreeMap<Long, List<Op>>> byThread = new HashMap<>();
        for (Op op : ops) {
            if (fenced(op.kind()) && visibility(op).first() != Long.MAX_VALUE) {
                byThread.computeIfAbsent(op.endpoint() + "/" + op.thread(), k -> new java.util.TreeMap<>())
                        .computeIfAbsent(op.fencesBefore(), k -> new ArrayList<>()).add(op);
            }
        }
        for (java.util.TreeMap<Long, List<Op>> epochs : byThread.values()) {
            Op latest = null; // the fenced-before call first complete last so far
            // Earlier calls by their last application: only one applied after b's first application
            // can be a stale copy or land over b, so a call looks at those alone (not at every
            // earlier call, which made a long history's check quadratic).
            java.util.TreeMap<Long, List<Op>> earlierByLast = new java.util.TreeMap<>();
            for (List<Op> epoch : epochs.values()) {
                for (Op b : epoch) {
                    long fb = visibility(b).first();
                    if (latest != null && fb < visibility(latest).complete()) {
                        bad.add("#" + b.id() + " " + b.kind() + " (after " + b.fencesBefore() + " fences) was"
                                + " applied before #" + latest.id() + " " + latest.kind() + " (after "
                                + latest.fencesBefore() + ") was complete at the target");
                    }
                    String stale = laterThan(earlierByLast.tailMap(fb, false).values(), b, fb);
                    if (stale != null) {
                        bad.add(stale);
                    }
                }
                for (Op a : epoch) {
                    if (latest == null || visibility(a).complete() > visibility(latest).complete()) {
                        latest = a;
                    }
                    earlierByLast.computeIfAbsent(visibility(a).last(), k -> new ArrayList<>(1)).add(a);
                }
            }
        }
        return bad;
    }

    /**
     * @param candidates earlier calls last applied after {@code fb}
     * @param b a call fenced after them
     * @param fb the order of b's first application
     * @return what the first of them that was applied again after b (a stale copy), or last over a
     *     write of b's, did; null if none
     */
    private String laterThan(java.util.Collection<List<Op>> candidates, Op b, long fb) {
        for (List<Op> as : candidates) {
            for (Op a : as) {
                if (visibility(a).unexplainedAfter(fb) != Long.MIN_VALUE) {
                    return "#" + a.id() + " " + a.kind() + " (after " + a.fencesBefore() + " fences) was applied"
                            + " again after #" + b.id() + " " + b.kind() + " (after " + b.fencesBefore() + ") was,"
                            + " and not as a copy sent again since: a stale copy";
                }
                if (writesOver(a, b) && visibility(a).last() > visibility(b).last()) {
                    return "#" + a.id() + " " + a.kind() + " (after " + a.fencesBefore() + " fences) was applied last,"
                            + " after #" + b.id() + " " + b.kind() + " (after " + b.fencesBefore() + ") it overlaps:"
                            + " sent again without the later call behind it";
                }
            }
        }
        return null;
    }

    /**
     * Every failure tells the truth: a call that failed with anything but
     * {@link dev.fenceline.OutcomeUnknownException} ({@link dev.fenceline.EndpointFailedException},
     * {@link dev.fenceline.EndpointClosedException}, {@link dev.fenceline.RemoteAccessException}, a
     * target's refusal), which says it was not and will not be applied, has no fragment the target
     * applied, at any time, however late. Only an unknown outcome leaves it open, and an active
     * message whose handler threw ({@link dev.fenceline.ActiveMessageException}: it ran). Needs
     * visibility events.
     *
     * @return this
     */
    public HistoryChecker assertOutcomesTruthful() {
        List<String> bad = new ArrayList<>();
        for (Op op : ops) {
            Outcome o = history.outcome(op);
            if (saysNotApplied(op) && visibility(op).first() != Long.MAX_VALUE) {
                bad.add("#" + op.id() + " " + op.kind() + " failed with " + o.error().getClass().getSimpleName()
                        + " (not applied), but the target applied it");
            }
        }
        return fail("failures tell the truth", bad);
    }

    /** Whether put {@code a} writes bytes that {@code b}, a write too, also writes. */
    private static boolean writesOver(Op a, Op b) {
        if (a.kind() != Op.Kind.PUT || b.kind() == Op.Kind.GET) {
            return false;
        }
        long bLength = AddWords.width(b); // a put's length, an atomic's width (8 where none was recorded)
        return a.address() < b.address() + bLength && b.address() < a.address() + a.length();
    }

    private static boolean fenced(Op.Kind k) {
        return k == Op.Kind.PUT || k == Op.Kind.GET || k == Op.Kind.ADD_POST || k == Op.Kind.ADD_FETCH
                || k == Op.Kind.OTHER_ATOMIC;
    }

    /**
     * The application's own contract, stronger than Fenceline's: every fetched ADD and every get saw
     * everything its thread issued before it on that endpoint, fenced or not. It holds when the
     * application fenced wherever it needed to; a missing fence shows up here.
     *
     * @return this
     */
    public HistoryChecker assertProgramOrderObserved() {
        return fail("reads observe everything issued before them (a fence missing?)",
                ordered((a, b) -> a.endpoint() == b.endpoint() && a.thread() == b.thread() && a.id() < b.id(), false));
    }

    /**
     * @param before the order that reads must observe
     * @param notAfter whether a get must also not see what a put ordered after it wrote
     */
    private List<String> ordered(java.util.function.BiPredicate<Op, Op> before, boolean notAfter) {
        List<String> bad = new ArrayList<>();
        Map<Long, Boolean> addOnly = AddWords.addOnly(ops);
        for (Op b : ops) {
            Outcome bo = history.outcome(b);
            if (bo == null || !bo.ok()) {
                continue;
            }
            if (b.kind() == Op.Kind.ADD_FETCH && addOnly.getOrDefault(b.address(), false)) {
                long sum = 0;
                for (Op a : ops) {
                    if (a.id() >= b.id()) {
                        break;
                    }
                    if (before.test(a, b) && a.isAdd() && a.address() == b.address() && !failed(a)) {
                        sum += a.operand();
                    }
                }
                long seen = bo.value() - initial.getOrDefault(b.address(), 0L);
                if (seen < sum) {
                    bad.add("fetch #" + b.id() + " at 0x" + Long.toHexString(b.address()) + " saw " + seen
                            + " added, but the ADDs ordered before it add up to " + sum);
                } else if (notAfter && seen > notAfterSum(b, before)) {
                    bad.add("fetch #" + b.id() + " at 0x" + Long.toHexString(b.address()) + " saw " + seen
                            + " added, more than the " + notAfterSum(b, before) + " of the ADDs not ordered after"
                            + " it: it saw one fenced after it");
                }
            } else if (b.kind() == Op.Kind.GET && bo.read() != null) {
                GetReads.check(ops, b, bo.read(), bad, before, notAfter, this::failed, this::saysNotApplied);
            }
        }
        return bad;
    }

    /** What the ADDs on the fetch's word that may have been applied before it add up to (at most). */
    private long notAfterSum(Op b, java.util.function.BiPredicate<Op, Op> before) {
        long sum = 0;
        for (Op a : ops) {
            if (a != b && a.isAdd() && a.address() == b.address() && !before.test(b, a) && !saysNotApplied(a)) {
                sum += a.operand();
            }
        }
        return sum;
    }

    /**
     * Every ADD applied exactly once: each word that only ever received ADDs ends at its initial
     * value plus the operands of the ADDs that completed, give or take those whose outcome is
     * unknown (failed with {@link dev.fenceline.OutcomeUnknownException}, or with no outcome); one
     * that failed with anything else was not applied. Where visibility is reported, every fragment of a call that completed was
     * applied, and none twice (a put or get that a lane without deduplication re-sent after a
     * restart may be applied again: they are idempotent).
     *
     * @param finalValue reads a word's value after everything completed (and was flushed)
     * @return this
     */
    public HistoryChecker assertExactlyOnce(LongUnaryOperator finalValue) {
        List<String> bad = new ArrayList<>();
        for (Map.Entry<Long, Boolean> w : AddWords.addOnly(ops).entrySet()) {
            if (!w.getValue()) {
                continue;
            }
            long sure = 0;
            long unsure = 0;
            for (Op a : ops) {
                if (a.isAdd() && a.address() == w.getKey()) {
                    if (saysNotApplied(a)) {
                        continue;
                    }
                    Outcome o = history.outcome(a);
                    if (o == null || !o.ok()) {
                        unsure += a.operand();
                    } else {
                        sure += a.operand();
                    }
                }
            }
            long added = finalValue.applyAsLong(w.getKey()) - initial.getOrDefault(w.getKey(), 0L);
            if (added < sure || added > sure + unsure) {
                bad.add("word 0x" + Long.toHexString(w.getKey()) + " received " + added + " from ADDs, expected "
                        + (unsure == 0 ? sure : "[" + sure + ", " + (sure + unsure) + "]"));
            }
            AddWords.checkFetches(ops, history, w.getKey(), initial.getOrDefault(w.getKey(), 0L), added, bad);
        }
        for (Op op : ops) {
            Visibility v = visibility(op);
            if (v.appliedTwice() != Long.MIN_VALUE) {
                bad.add("#" + op.id() + " " + op.kind() + ": the target applied its fragment " + v.appliedTwice()
                        + " twice");
            }
            String never = v.neverApplied();
            if (never != null && history.outcome(op) != null && history.outcome(op).ok()) {
                bad.add("#" + op.id() + " " + op.kind() + " completed, but the target never applied " + never);
            }
        }
        return fail("atomics apply exactly once", bad);
    }

    /** The event order of a call's completion, or Long.MAX_VALUE. */
    private long completed(Op op) {
        for (Event e : history.events(op)) {
            if (e.kind() == Event.Kind.COMPLETED) {
                return e.order();
            }
        }
        return Long.MAX_VALUE;
    }

    private final Map<Long, Visibility> visibilities = new HashMap<>();

    private Visibility visibility(Op op) {
        return visibilities.computeIfAbsent(op.id(), k -> Visibility.of(op, history.events(op)));
    }

    private boolean failed(Op op) {
        Outcome o = history.outcome(op);
        return o != null && !o.ok();
    }

    /**
     * Whether the call's failure says it was not and will not be applied: every failure but an
     * unknown outcome, and but a message whose handler threw (it ran).
     */
    private boolean saysNotApplied(Op op) {
        Outcome o = history.outcome(op);
        return o != null && !o.ok() && !(o.error() instanceof dev.fenceline.OutcomeUnknownException)
                && !(o.error() instanceof dev.fenceline.ActiveMessageException);
    }

    private static boolean fencedBefore(Op a, Op b) {
        return a.endpoint() == b.endpoint() && a.thread() == b.thread() && a.id() < b.id()
                && a.fencesBefore() < b.fencesBefore();
    }

    private HistoryChecker fail(String property, List<String> bad) {
        if (!bad.isEmpty()) {
            throw new AssertionError(property + ": " + bad.size() + " violation(s) in a history of " + ops.size()
                    + " calls; first: " + String.join("; ", bad.subList(0, Math.min(5, bad.size()))));
        }
        return this;
    }
}
