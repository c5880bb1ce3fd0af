package dev.fenceline.actor;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.OpClass;
import dev.fenceline.spi.RequestTrace;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * One user operation on an endpoint. Built and epoch-stamped by the calling thread, then owned by the
 * endpoint actor alone (or, posted by the calling thread under the grant, by its lane until the
 * answer completes it, or until the lane gives it back and the actor takes it over). Completing it
 * is the last thing its owner does with it: the user's callbacks run inside {@code complete}, and
 * may drop or reuse the buffers at once.
 */
public final class Request {
    /** What the request does. */
    public enum Kind {
        /** Remote write. */
        PUT,
        /** Remote read. */
        GET,
        /** Atomic without result. */
        ATOMIC_POST,
        /** Atomic returning the old value. */
        ATOMIC_FETCH,
        /** Compare-and-swap. */
        CSWAP,
        /** Active message. */
        AM,
        /** Endpoint flush. */
        FLUSH;

        /** @return whether fences order this kind (RMA and atomics) */
        public boolean fenced() {
            return this != AM && this != FLUSH;
        }
    }

    final Kind kind;
    final long epoch;
    /** A get posted and not yet retired (InflightTable counts it open). */
    boolean readOpen;
    final ByteBuffer local;
    final long remoteAddress;
    final RemoteKey key;
    final AtomicOp atomicOp;
    final int width;
    final long operand;
    final long compare;
    final int amId;
    final ByteBuffer header;
    /** Null for an implicit operation: it has no completion of its own. */
    private final CompletableFuture<Object> future;
    private final boolean intResult;
    /** Where an implicit operation reports its error, for the next flush; null otherwise. */
    private java.util.function.ObjLongConsumer<FencelineException> implicitErrors;
    /** A test kit's observer, attached at submission; null almost always. */
    RequestTrace trace;

    /** @return whether it has no completion of its own (an implicit operation: the next flush reports it) */
    boolean implicit() {
        return future == null;
    }
    /** The order in which the endpoint's channel received it (1, 2, ...); set at submission. */
    volatile long submissionNumber;

    // Actor-owned state.
    long seq;
    int lane = -1;
    int fragmentsOutstanding;
    /** How many fragments it was numbered as at its first post (0 before, and for one a calling thread posted). */
    int fragmentCount;
    boolean posted;
    boolean done;
    /** Sequence number of fragment 0 for exactly-once (assigned at first post, kept across restarts), or -1. */
    long firstSn = -1;
    /** After a restart: the fragments to send again (the others completed); null = all. */
    int[] resend;
    /** How many times the request was restarted after a reconfiguration. */
    int restarts;
    /** The fragment size chosen at first post, kept so that restarted fragments keep their ranges. */
    int fragmentSize;
    /** The first fragment error; the request fails with it once every fragment is accounted for. */
    FencelineException error;
    /**
     * Whether a copy of it that a given-up connection had may have been applied (or may still be):
     * then failing it later must say the outcome is unknown, never that it was not applied.
     */
    boolean mayHaveApplied;
    /** A put of several fragments of which one was applied: failing it must not say it was not applied. */
    boolean partlyApplied;
    /**
     * The exactly-once scope of the copies that may have been applied ({@link #MIXED_SCOPES} if they
     * span several, or one had none), kept across restarts: only a lane of that scope recognizes them.
     */
    Object riskScope;
    /** The same, of the copies that may still be applied later; null while there is none. */
    Object stillApplyScope;
    /** A scope no lane's scope equals. */
    static final Object MIXED_SCOPES = new Object();

    /**
     * A copy of it on a connection the endpoint gave up: what that copy may do is kept for every
     * later restart, so that each is judged on all of them.
     *
     * @param mayHave whether the copy may have been applied
     * @param mayStill whether it may still be applied later
     * @param scope the exactly-once scope of the copy's lane (null: none)
     */
    void copyGivenUp(boolean mayHave, boolean mayStill, Object scope) {
        if (mayHave) {
            riskScope = joinScopes(riskScope, scope);
        }
        if (mayStill) {
            stillApplyScope = joinScopes(stillApplyScope, scope);
        }
        mayHaveApplied |= mayHave;
    }

    private static Object joinScopes(Object soFar, Object copy) {
        return copy == null || soFar != null && !soFar.equals(copy) ? MIXED_SCOPES : copy;
    }

    /**
     * @param e why it fails
     * @return {@code e}, or an {@link dev.fenceline.OutcomeUnknownException} with it as the cause if
     *     a copy may have been applied (or may still be), or some of its fragments were: then it did
     *     not fail unapplied
     */
    FencelineException truthful(FencelineException e) {
        if (!(mayHaveApplied || partlyApplied) || e instanceof dev.fenceline.OutcomeUnknownException) {
            return e;
        }
        return new dev.fenceline.OutcomeUnknownException(kind + String.format(" at 0x%x", remoteAddress)
                + (partlyApplied ? " was partly applied (some of its fragments were): " : " may have been applied, or"
                + " may still be, by a lane the endpoint lost: ") + e.getMessage(), e);
    }
    /** Fragments on given-up connections that will still answer ({@code Revocation.Fate.ANSWER_FOLLOWS}). */
    int held;
    /**
     * Neighbors in its endpoint's list of requests accepted and not yet retired (intrusive: no map
     * entry, and no map per endpoint); see {@code InflightTable}.
     */
    Request previousOutstanding;
    Request nextOutstanding;

    /**
     * A posted request the actor took back from its ended lane, with the others taken back at the
     * same time; null otherwise.
     */
    TakenBack takenBack;

    private Request(Kind kind, long epoch, ByteBuffer local, long remoteAddress, RemoteKey key, AtomicOp atomicOp,
            int width, long operand, long compare, int amId, ByteBuffer header, boolean intResult) {
        this.kind = kind;
        this.epoch = epoch;
        this.local = local;
        this.remoteAddress = remoteAddress;
        this.key = key;
        this.atomicOp = atomicOp;
        this.width = width;
        this.operand = operand;
        this.compare = compare;
        this.amId = amId;
        this.header = header;
        this.intResult = intResult;
        this.future = new CompletableFuture<>();
    }

    private Request(Request r, java.util.function.ObjLongConsumer<FencelineException> errors) {
        this.kind = r.kind;
        this.epoch = r.epoch;
        this.local = r.local;
        this.remoteAddress = r.remoteAddress;
        this.key = r.key;
        this.atomicOp = r.atomicOp;
        this.width = r.width;
        this.operand = r.operand;
        this.compare = r.compare;
        this.amId = r.amId;
        this.header = r.header;
        this.intResult = r.intResult;
        this.future = null;
        this.implicitErrors = errors;
    }

    /**
     * @param r a put or posted atomic
     * @param errors receives its error, if any, for the next flush to report
     * @return the same operation without a completion of its own
     */
    static Request implicit(Request r, java.util.function.ObjLongConsumer<FencelineException> errors) {
        return new Request(r, errors);
    }

    /**
     * @param kind PUT or GET
     * @param epoch the epoch captured at issue
     * @param local source or destination (a private view: position to limit)
     * @param remoteAddress first remote byte
     * @param key the region's key
     * @return the request
     */
    public static Request rma(Kind kind, long epoch, ByteBuffer local, long remoteAddress, RemoteKey key) {
        return new Request(kind, epoch, local, remoteAddress, key, null, 0, 0, 0, 0, null, false);
    }

    /**
     * @param kind ATOMIC_POST, ATOMIC_FETCH or CSWAP
     * @param epoch the epoch captured at issue
     * @param remoteAddress the aligned remote address
     * @param key the region's key
     * @param op the atomic (null for CSWAP)
     * @param width 4 or 8
     * @param operand operand, or the desired value
     * @param compare the expected value (CSWAP)
     * @return the request
     */
    public static Request atomic(Kind kind, long epoch, long remoteAddress, RemoteKey key, AtomicOp op, int width,
            long operand, long compare) {
        return new Request(kind, epoch, null, remoteAddress, key, op, width, operand, compare, 0, null, width == 4);
    }

    /**
     * @param amId the handler id
     * @param header private view of the header
     * @param payload private view of the payload
     * @return the request
     */
    public static Request activeMessage(int amId, ByteBuffer header, ByteBuffer payload) {
        return new Request(Kind.AM, 0, payload, 0, null, null, 0, 0, 0, amId, header, false);
    }

    /**
     * @param epoch the epoch captured at issue
     * @return a flush request
     */
    public static Request flush(long epoch) {
        return new Request(Kind.FLUSH, epoch, null, 0, null, null, 0, 0, 0, 0, null, false);
    }

    /** @return the request's kind */
    public Kind kind() {
        return kind;
    }

    /** @return the epoch captured at issue */
    public long epoch() {
        return epoch;
    }

    /** @return the sequence number the endpoint assigned */
    public long seq() {
        return seq;
    }

    /** @return the stage the user holds */
    public CompletableFuture<Object> future() {
        return future;
    }

    /** @return whether the request has completed */
    public boolean isDone() {
        return done;
    }

    /**
     * Completes successfully; a no-op on a completed request.
     *
     * @param value the fetched value (atomics) or 0
     * @return whether this call completed it
     */
    boolean succeed(long value) {
        if (done) {
            return false;
        }
        done = true;
        if (future == null) {
            return true; // implicit: the next flush completes it
        }
        Object result = switch (kind) {
            case ATOMIC_FETCH, CSWAP -> intResult ? (Object) (int) value : (Object) value;
            default -> null;
        };
        future.complete(result);
        return true;
    }

    /**
     * Completes with an error; a no-op on a completed request.
     *
     * @param error the cause
     * @return whether this call completed it
     */
    boolean fail(FencelineException error) {
        if (done) {
            return false;
        }
        done = true;
        if (future == null) {
            implicitErrors.accept(error, submissionNumber);
            return true;
        }
        future.completeExceptionally(error);
        return true;
    }

    /** @return the selection class of this request */
    OpClass opClass(FencelineSettings s) {
        return switch (kind) {
            case ATOMIC_POST, ATOMIC_FETCH, CSWAP -> OpClass.ATOMIC;
            case AM -> OpClass.ACTIVE_MESSAGE;
            default -> {
                long n = local.remaining();
                yield n <= s.shortMax() ? OpClass.RMA_SHORT
                        : n >= s.bandwidthThreshold() ? OpClass.RMA_LARGE : OpClass.RMA_MEDIUM;
            }
        };
    }

    @Override
    public String toString() {
        return kind + "#" + seq + "@e" + epoch + (key == null ? "" : String.format(" 0x%x", remoteAddress));
    }
}
