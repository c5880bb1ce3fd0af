package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.internal.VarHandles;
import dev.fenceline.spi.DirectAnswers;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The account of an endpoint's direct operations that are answered later: active messages the
 * calling thread wrote into a peer's queue under the grant, and operations callers posted on a lane
 * themselves ({@link PostedRequest}), answered on a transport's thread. Two monotonic counts,
 * never decremented (a count taken back could strand a flush that had already read it). The lane
 * numbers each operation when it is sure to be sent and reports one lane's answers in that order;
 * the actor moves the grant to another lane only once every answer is in. So "answered >= n" means
 * exactly "the first n were answered", and a flush that started when n had been sent completes once
 * it holds. A message's failure is kept under its number: the flush that waited for it reports it.
 * The ledger also holds the endpoint's exactly-once numbering, which posting threads share with the
 * actor, the count of posted operations still out (the actor's barrier), the operations a lane
 * gave back when it ended, and the posted gets still open by epoch (a caller posts no later-epoch
 * write behind one: docs/fences.md, reads before a fence).
 */
final class DirectLedger {
    private static final VarHandle SENT = VarHandles.field(MethodHandles.lookup(), "sent", long.class);
    private static final VarHandle ANSWERED = VarHandles.field(MethodHandles.lookup(), "answered", long.class);
    private static final VarHandle SUCCEEDED = VarHandles.field(MethodHandles.lookup(), "succeeded", long.class);
    private static final VarHandle HEARD = VarHandles.field(MethodHandles.lookup(), "heard", long.class);
    private static final VarHandle FAILURES = VarHandles.field(MethodHandles.lookup(), "failures", long.class);
    private static final VarHandle NEXT_SEQUENCE = VarHandles.field(MethodHandles.lookup(), "nextSequence",
            long.class);
    private static final VarHandle POSTING = VarHandles.field(MethodHandles.lookup(), "posting", long.class);
    private static final VarHandle POSTED_TOKENS = VarHandles.field(MethodHandles.lookup(), "postedTokens",
            long.class);
    private static final VarHandle RETURNED = VarHandles.field(MethodHandles.lookup(), "returned",
            ConcurrentLinkedQueue.class);
    private static final VarHandle FLUSHES = VarHandles.field(MethodHandles.lookup(), "flushes",
            ConcurrentLinkedQueue.class);

    // Counts in fields with handles rather than atomic objects: every endpoint has a ledger.
    private volatile long sent;
    private volatile long answered;
    /**
     * Successful answers as statistics count them: a posted operation's before its future completes
     * (a caller that saw its result sees it counted), its place in {@link #answered} only after, so
     * that no flush can complete before the operations it covers. An answer counts here or in
     * {@link #failures}, never both, so that each statistic only ever goes up (a difference of two
     * counts read one after the other could go down for a moment).
     */
    private volatile long succeeded;
    /** Answers that came from a peer (not abandoned): for keepalive, proof that the lane is alive. */
    private volatile long heard;
    private volatile long failures;
    /**
     * Guarded by the ledger's lock (this): failures by message number, taken by flushes in the order
     * of their targets; null until the first.
     */
    private TreeMap<Long, FencelineException> errors;
    /** The answered count a waiting flush needs: the answer that reaches it wakes the actor. */
    private volatile long wanted = Long.MAX_VALUE;
    /**
     * The lane direct active messages and posted operations go on (the actor's grant says), asked for
     * answers a flush waits for.
     */
    private volatile dev.fenceline.spi.DirectAccess answering;
    /** The largest count of answers that lane was asked for. */
    private volatile long asked;
    /** Flushes waiting for direct answers; null until the first (most endpoints never have one). */
    private volatile ConcurrentLinkedQueue<DirectFlush> flushes;
    /**
     * The endpoint's exactly-once numbering, shared by the actor and by threads posting on a lane
     * themselves (an atomic count: the two never take the same number).
     */
    private volatile long nextSequence;
    /**
     * Operations calling threads are posting, or have posted and not seen answered or taken back by
     * the actor: while there are any, the actor takes no submission (it waits, so that nothing it
     * sends can pass them, and its low-water mark cannot pass their numbers).
     */
    private volatile long posting;
    /** Actor-written: posted operations it took back. */
    private volatile long taken;
    /** Set by the actor while it waits for {@link #posting} to reach zero. */
    private volatile boolean postingWanted;
    private volatile long postedTokens;
    /** Posted operations whose lane ended before their answer: the actor takes them back. Null until the first. */
    private volatile ConcurrentLinkedQueue<PostedRequest> returned;
    /**
     * Guarded by the ledger's lock: the gets calling threads posted that are neither answered nor
     * given back, by epoch; null until the first.
     */
    private OpenReads postedReads;
    /** The oldest epoch of those, written under the lock, read by posting threads without it. */
    private volatile long oldestPostedRead = Long.MAX_VALUE;
    private final ImplicitErrors implicit;
    private final SubmissionQueue submissions;
    /** What it counts, told to the worker's running totals too. */
    private final DirectCounts counts;

    /** A flush under a grant that waits only for answers to direct active messages. */
    private record DirectFlush(long target, long before, CompletableFuture<Void> done) {
    }

    /** Where lanes report the answers to this endpoint's direct active messages. */
    final DirectAnswers answers = new DirectAnswers() {
        @Override
        public long queued() {
            long n = (long) SENT.getAndAdd(DirectLedger.this, 1L);
            counts.sent();
            return n;
        }

        @Override
        public void answered(long index, FencelineException error) {
            if (error != null) { // before the answered count: the flush it releases must see it
                FAILURES.getAndAdd(DirectLedger.this, 1L);
                counts.failed(1);
                synchronized (DirectLedger.this) {
                    if (errors == null) {
                        errors = new TreeMap<>();
                    }
                    errors.putIfAbsent(index, error);
                }
            } else {
                SUCCEEDED.getAndAdd(DirectLedger.this, 1L);
                counts.succeeded();
            }
            HEARD.getAndAdd(DirectLedger.this, 1L);
            settled((long) ANSWERED.getAndAdd(DirectLedger.this, 1L) + 1);
        }

        @Override
        public void abandoned(int count, FencelineException error) {
            FAILURES.getAndAdd(DirectLedger.this, (long) count);
            counts.failed(count);
            // Sent after every flush that has completed: the next flush to complete reports it.
            implicit.failed(error, 0);
            settled((long) ANSWERED.getAndAdd(DirectLedger.this, (long) count) + count);
        }
    };

    /**
     * @param implicit where a lane's abandoned messages are reported, for the next flush
     * @param submissions wakes the actor when an answer it waits for comes
     * @param worker the worker's running totals, which its counts also go to
     */
    DirectLedger(ImplicitErrors implicit, SubmissionQueue submissions, WorkerCounts worker) {
        this.implicit = implicit;
        this.submissions = submissions;
        this.counts = new DirectCounts(worker);
    }

    /**
     * @param n how many numbers to take
     * @return the first of {@code n} consecutive sequence numbers
     */
    long takeSequences(int n) {
        return (long) NEXT_SEQUENCE.getAndAdd(this, (long) n);
    }

    /** @return the next sequence number to be taken: the low-water mark when nothing is unanswered */
    long nextSequence() {
        return nextSequence;
    }

    /** @return a token for an operation posted by a calling thread (negative: never one of the actor's) */
    long postedToken() {
        return Long.MIN_VALUE + (long) POSTED_TOKENS.getAndAdd(this, 1L);
    }

    /** A calling thread starts posting: before it checks the grant (the actor's barrier reads this). */
    void postingStarted() {
        POSTING.getAndAdd(this, 1L);
    }

    /**
     * Posted operations are over (answered, refused before sending, or taken back and retired by the
     * actor).
     *
     * @param n how many
     */
    void postingEnded(long n) {
        long left = (long) POSTING.getAndAdd(this, -n) - n;
        if (left == 0 && postingWanted) {
            postingWanted = false;
            submissions.wake();
        }
    }

    /**
     * Actor: whether no posted operation is outstanding; if one is, the last to end wakes the actor.
     *
     * @return true if none is
     */
    boolean postingSettledOrWake() {
        if (posting == 0) {
            return true;
        }
        postingWanted = true;
        if (posting == 0) { // re-read after the wish: an end counted in between saw no wish
            return true;
        }
        ask(sent); // the actor waits for their answers, which the target may hold back
        return false;
    }

    /**
     * A calling thread posts a get (before the lane may send it).
     *
     * @param epoch its epoch
     */
    synchronized void readPosted(long epoch) {
        if (postedReads == null) {
            postedReads = new OpenReads();
        }
        postedReads.opened(epoch);
        oldestPostedRead = postedReads.oldest();
    }

    /**
     * A posted get was answered, failed, given back, or not taken by its lane.
     *
     * @param epoch its epoch
     */
    synchronized void readEnded(long epoch) {
        postedReads.closed(epoch);
        oldestPostedRead = postedReads.oldest();
    }

    /**
     * Whether a get posted by a calling thread with an earlier epoch is still open: work of this
     * epoch (but a get) must not be posted behind it (docs/fences.md, reads before a fence).
     *
     * @param epoch a request's epoch
     * @return true if one is
     */
    boolean readPostedBefore(long epoch) {
        return oldestPostedRead < epoch;
    }

    /** @param p a posted operation its lane gave back (any thread) */
    void returned(PostedRequest p) {
        VarHandles.<ConcurrentLinkedQueue<PostedRequest>>made(RETURNED, this, ConcurrentLinkedQueue::new).add(p);
    }

    /** @return actor: the next operation a lane gave back, in the order given, or null */
    PostedRequest pollReturned() {
        ConcurrentLinkedQueue<PostedRequest> q = returned;
        return q == null ? null : q.poll();
    }

    /**
     * Actor: posted operations it took back were all retired (restarted and answered, or failed):
     * they count as answered now, in one step, so a flush that waited for any of them waited for
     * all (they may complete in any order once restarted). Statistics counted them with the actor's.
     *
     * @param n how many
     */
    void adoptedRetired(long n) {
        settled((long) ANSWERED.getAndAdd(this, n) + n);
        postingEnded(n);
    }

    /** @param n actor: posted operations it took back (the actor counts them from now on) */
    void took(long n) {
        taken = taken + n;
        counts.tookBack(n);
    }

    /** @return posted operations the actor took back */
    long taken() {
        return taken;
    }

    /**
     * A posted operation was answered by its target: counted for statistics, before its future
     * completes. Its error (if any) is its future's, not a flush's.
     *
     * @param failed whether the target refused it
     */
    void postedCounted(boolean failed) {
        if (failed) {
            FAILURES.getAndAdd(this, 1L);
            counts.failed(1);
        } else {
            SUCCEEDED.getAndAdd(this, 1L);
            counts.succeeded();
        }
    }

    /** A posted operation's future completed: it counts as answered for flushes and keepalive now. */
    void postedSettled() {
        HEARD.getAndAdd(this, 1L);
        settled((long) ANSWERED.getAndAdd(this, 1L) + 1);
    }

    private void settled(long count) {
        ConcurrentLinkedQueue<DirectFlush> waiting = flushes;
        if (waiting != null && !waiting.isEmpty()) {
            release(count);
        }
        if (count >= wanted) {
            wanted = Long.MAX_VALUE;
            submissions.wake();
        }
    }

    /** @return whether every direct active message sent so far was answered */
    boolean settled() {
        long s = sent; // first: answers counted after this read cover at least these
        return answered >= s;
    }

    /** @return direct active messages answered by their peer so far (keepalive's evidence) */
    long heard() {
        return heard;
    }

    /** @return direct active messages sent so far: what a flush started now waits for */
    long sent() {
        return sent;
    }

    /** @return direct active messages answered or given up so far */
    long answered() {
        return answered;
    }

    /** @return successful answers as statistics count them (see {@link #succeeded}) */
    long succeeded() {
        return succeeded;
    }

    /** @return direct active messages whose handler failed or whose lane died first */
    long failures() {
        return failures;
    }

    /**
     * What a flush reports: the first failed implicit operation submitted before it, else the first
     * failed direct active message sent before it (each consumed: one flush reports one).
     *
     * @param before the flush's submission number (exclusive bound)
     * @param target the direct messages sent before it
     * @return the error, or null
     */
    FencelineException flushError(long before, long target) {
        FencelineException first = implicit.take(before);
        FencelineException direct;
        synchronized (this) {
            Map.Entry<Long, FencelineException> e = errors == null ? null : errors.firstEntry();
            direct = e == null || e.getKey() >= target ? null : e.getValue();
            if (direct != null) {
                errors.headMap(target).clear();
            }
        }
        return first != null ? first : direct;
    }

    /**
     * Actor: a flush needs {@code target} answers.
     *
     * @param target the count it waits for
     * @return true if they are in; otherwise the answer that brings them wakes the actor
     */
    boolean answeredOrWake(long target) {
        if (answered >= target) {
            return true;
        }
        ask(target);
        // The smallest wish wins (flushes are checked in order); every reset to MAX comes with a
        // wake-up, after which the actor wishes again.
        wanted = Math.min(wanted, target);
        // Re-read after publishing the wish: an answer counted in between saw the old wish.
        return answered >= target;
    }

    /**
     * A flush issued under a valid grant while direct active messages are unanswered: completed by
     * the answer that brings the count to what was sent before it, on that answer's thread.
     *
     * @param target the direct messages sent before it, read before the flush was issued
     * @param before the flush's submission number (implicit errors before it are its own)
     * @return completes when the handler ran for each of them
     */
    CompletableFuture<Void> flush(long target, long before) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ask(target);
        VarHandles.<ConcurrentLinkedQueue<DirectFlush>>made(FLUSHES, this, ConcurrentLinkedQueue::new)
                .add(new DirectFlush(target, before, done));
        release(answered); // the last answer may have come before the add
        FencelineException ended = submissions.terminal(); // after the add
        if (ended != null) {
            fail(ended); // the actor may have failed the waiting ones just before the add
        }
        return done;
    }

    /**
     * @param lane where direct active messages and posted operations go from now on (the actor,
     *     publishing a grant that sends them), or null if that lane holds no answers back
     */
    void answersFrom(dev.fenceline.spi.DirectAccess lane) {
        answering = lane;
    }

    /**
     * Someone waits for the first {@code target} answers: the lane they went on is asked for any its
     * target holds back (once per target; asking twice costs a message, never an answer).
     */
    private void ask(long target) {
        dev.fenceline.spi.DirectAccess lane = answering;
        if (lane != null && target > asked && lane.answersWanted()) {
            asked = target;
        }
    }

    private void release(long count) {
        ConcurrentLinkedQueue<DirectFlush> waiting = flushes;
        if (waiting == null) {
            return;
        }
        List<DirectFlush> ready = null;
        // One thread at a time, smallest target first: each flush takes the failures of the
        // messages it waited for, and a later one cannot take them first.
        synchronized (this) {
            for (DirectFlush d : waiting) {
                if (d.target() <= count && waiting.remove(d)) {
                    if (ready == null) {
                        ready = new ArrayList<>(2);
                    }
                    ready.add(d);
                }
            }
            if (ready == null) {
                return;
            }
            ready.sort(Comparator.comparingLong(DirectFlush::target));
            for (DirectFlush d : ready) {
                FencelineException e = flushError(d.before(), d.target());
                if (e == null) {
                    d.done().complete(null); // dependents go to the dispatcher (EndpointImpl)
                } else {
                    d.done().completeExceptionally(e);
                }
            }
        }
    }

    /**
     * The endpoint ended (failed or closed): the flushes waiting for direct answers fail with it.
     *
     * @param e the endpoint's end
     */
    void fail(FencelineException e) {
        ConcurrentLinkedQueue<DirectFlush> waiting = flushes;
        if (waiting == null) {
            return;
        }
        for (DirectFlush d : waiting) {
            if (waiting.remove(d)) {
                d.done().completeExceptionally(endedUnder(d, e));
            }
        }
    }

    /**
     * @return what a flush that still waited reports: a message it waited for is in the peer's queue
     *     and its handler may yet run, so the outcome is unknown (unless a failure it covers says so
     *     already); "failed" would say that none was delivered
     */
    private FencelineException endedUnder(DirectFlush d, FencelineException e) {
        FencelineException first = flushError(d.before(), d.target());
        if (first instanceof OutcomeUnknownException || e instanceof OutcomeUnknownException) {
            return first instanceof OutcomeUnknownException ? first : e;
        }
        if (answered < d.target()) {
            return new OutcomeUnknownException((d.target() - answered) + " active message(s) sent before the flush"
                    + " were not answered when the endpoint ended: they may have been delivered, and their handlers"
                    + " may still run (" + e.getMessage() + ")", e);
        }
        return first != null ? first : e;
    }
}
