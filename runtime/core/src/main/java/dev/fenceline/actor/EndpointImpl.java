package dev.fenceline.actor;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneInfo;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.RegistrationTable;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.LoggerFactory;

/**
 * The user's handle on an endpoint. Validates what can be checked at the origin (key owner, bounds,
 * alignment, operation), stamps the epoch and hands the request to the actor through the channel.
 * Never reads actor state.
 */
final class EndpointImpl implements Endpoint {
    /**
     * What every operation done on the fast path returns: one shared, completed stage (a minimal
     * stage cannot be completed again, and its {@code toCompletableFuture()} is a fresh copy), so the
     * fast path allocates nothing per put or posted atomic.
     */
    private static final CompletionStage<Void> DONE = CompletableFuture.completedStage(null);
    private final EndpointChannel channel;
    private final AtomicLong workerEpoch;
    private final AtomicLong endpointFences = new AtomicLong();
    private final ActorSystem<?> system;
    private final Duration closeTimeout;
    private final AtomicBoolean closeStarted = new AtomicBoolean();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private volatile ActorRef<EndpointActor.Command> actor;
    /** Set once its worker has folded its counts into the retired totals; guarded by the worker's lock. */
    private boolean forgotten;

    EndpointImpl(EndpointChannel channel, AtomicLong workerEpoch, ActorSystem<?> system, Duration closeTimeout) {
        this.channel = channel;
        this.workerEpoch = workerEpoch;
        this.system = system;
        this.closeTimeout = closeTimeout;
    }

    void actor(ActorRef<EndpointActor.Command> ref) {
        this.actor = ref;
    }

    EndpointChannel channel() {
        return channel;
    }

    /** Runs once the endpoint is closed, before {@link #close()}'s stage completes; set once by its worker. */
    private volatile Runnable onClosed = () -> { };

    /** @param hook runs once the endpoint is closed, before {@link #close()}'s stage completes */
    void onClosed(Runnable hook) {
        this.onClosed = hook;
    }

    private void closedNow() {
        onClosed.run();
        closed.complete(null);
    }

    /** The worker counted this endpoint into its retired totals. */
    void forgotten() {
        forgotten = true;
    }

    /** @return whether the worker counted it into its retired totals (read under the worker's lock) */
    boolean isForgotten() {
        return forgotten;
    }

    /** The epoch a request captures at issue: worker fences plus this endpoint's own fences. */
    private long epoch() {
        return workerEpoch.get() + endpointFences.get();
    }

    @Override
    public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
        return rma(Request.Kind.PUT, src, remoteAddress, key);
    }

    @Override
    public CompletionStage<Void> get(ByteBuffer dst, long remoteAddress, RemoteKey key) {
        if (dst != null && dst.isReadOnly()) {
            return CompletableFuture.failedFuture(new RemoteAccessException(Reason.INVALID_OPERATION,
                    "get into a read-only buffer"));
        }
        return rma(Request.Kind.GET, dst, remoteAddress, key);
    }

    private CompletionStage<Void> rma(Request.Kind kind, ByteBuffer local, long remoteAddress, RemoteKey key) {
        Objects.requireNonNull(local, "buffer");
        FencelineException bad = check(remoteAddress, key, local.remaining(), 1);
        if (bad != null) {
            return CompletableFuture.failedFuture(bad);
        }
        try {
            if (kind == Request.Kind.PUT ? putNow(local, remoteAddress, key) : getNow(local, remoteAddress, key)) {
                return DONE;
            }
        } catch (FencelineException e) {
            channel.fastFailure();
            return CompletableFuture.failedFuture(e);
        }
        return submitVoid(Request.rma(kind, epoch(), local.slice(), remoteAddress, key));
    }

    /**
     * The fast path by grant: performs the put on this thread if the actor granted it (nothing of
     * the endpoint outstanding) and the lane can do it directly. Its refusal of a bad key or range
     * is thrown as it would be reported.
     *
     * @return whether it was done here
     */
    private boolean putNow(ByteBuffer src, long remoteAddress, RemoteKey key) {
        EndpointChannel.Grant g = channel.validGrant();
        if (g == null || !g.lane().putNow(key, remoteAddress, src)) {
            return false;
        }
        channel.fastOperation();
        return true;
    }

    private boolean getNow(ByteBuffer dst, long remoteAddress, RemoteKey key) {
        EndpointChannel.Grant g = channel.validGrant();
        if (g == null || !g.lane().getNow(key, remoteAddress, dst)) {
            return false;
        }
        channel.fastOperation();
        return true;
    }

    private boolean atomicPostNow(AtomicOp op, long remoteAddress, RemoteKey key, int width, long operand) {
        EndpointChannel.Grant g = channel.validGrant();
        if (g == null || !g.lane().atomicPostNow(key, remoteAddress, op, width, operand)) {
            return false;
        }
        channel.fastOperation();
        return true;
    }

    @Override
    public void putImplicit(ByteBuffer src, long remoteAddress, RemoteKey key) {
        Objects.requireNonNull(src, "src");
        FencelineException bad = check(remoteAddress, key, src.remaining(), 1);
        if (bad != null) {
            throw bad;
        }
        try {
            if (putNow(src, remoteAddress, key)) {
                return;
            }
        } catch (FencelineException e) {
            channel.fastFailure();
            channel.implicitFailed(e, channel.submissionCount()); // for the next flush to report
            return;
        }
        submitImplicit(Request.rma(Request.Kind.PUT, epoch(), src.slice(), remoteAddress, key));
    }

    @Override
    public void atomicPostImplicit64(AtomicOp op, long remoteAddress, RemoteKey key, long operand) {
        Objects.requireNonNull(op, "op");
        if (!op.postable()) {
            throw new RemoteAccessException(Reason.INVALID_OPERATION, op + " cannot be posted (its old value would"
                    + " be lost); use atomicFetch64");
        }
        FencelineException bad = check(remoteAddress, key, 8, 8);
        if (bad != null) {
            throw bad;
        }
        try {
            if (atomicPostNow(op, remoteAddress, key, 8, operand)) {
                return;
            }
        } catch (FencelineException e) {
            channel.fastFailure();
            channel.implicitFailed(e, channel.submissionCount());
            return;
        }
        submitImplicit(Request.atomic(Request.Kind.ATOMIC_POST, epoch(), remoteAddress, key, op, 8, operand, 0));
    }

    private void submitImplicit(Request r) {
        if (channel.isClosing()) {
            throw new EndpointClosedException("endpoint " + channel.name() + " is closed");
        }
        if (channel.failure() != null) {
            throw channel.failure();
        }
        channel.submit(Request.implicit(r, channel::implicitFailed));
    }

    @Override
    public CompletionStage<Void> atomicPost32(AtomicOp op, long remoteAddress, RemoteKey key, int operand) {
        return atomicPost(op, remoteAddress, key, 4, operand);
    }

    @Override
    public CompletionStage<Void> atomicPost64(AtomicOp op, long remoteAddress, RemoteKey key, long operand) {
        return atomicPost(op, remoteAddress, key, 8, operand);
    }

    private CompletionStage<Void> atomicPost(AtomicOp op, long remoteAddress, RemoteKey key, int width, long operand) {
        Objects.requireNonNull(op, "op");
        if (!op.postable()) {
            return CompletableFuture.failedFuture(new RemoteAccessException(Reason.INVALID_OPERATION,
                    op + " cannot be posted (its old value would be lost); use atomicFetch" + width * 8));
        }
        FencelineException bad = check(remoteAddress, key, width, width);
        if (bad != null) {
            return CompletableFuture.failedFuture(bad);
        }
        try {
            if (atomicPostNow(op, remoteAddress, key, width, operand)) {
                return DONE;
            }
        } catch (FencelineException e) {
            channel.fastFailure();
            return CompletableFuture.failedFuture(e);
        }
        return submitVoid(Request.atomic(Request.Kind.ATOMIC_POST, epoch(), remoteAddress, key, op, width, operand, 0));
    }

    @Override
    public CompletionStage<Integer> atomicFetch32(AtomicOp op, long remoteAddress, RemoteKey key, int operand) {
        return fetch(Request.Kind.ATOMIC_FETCH, Objects.requireNonNull(op, "op"), remoteAddress, key, 4, operand, 0);
    }

    @Override
    public CompletionStage<Long> atomicFetch64(AtomicOp op, long remoteAddress, RemoteKey key, long operand) {
        return fetch(Request.Kind.ATOMIC_FETCH, Objects.requireNonNull(op, "op"), remoteAddress, key, 8, operand, 0);
    }

    @Override
    public CompletionStage<Integer> compareAndSwap32(long remoteAddress, RemoteKey key, int expected, int desired) {
        return fetch(Request.Kind.CSWAP, null, remoteAddress, key, 4, desired, expected);
    }

    @Override
    public CompletionStage<Long> compareAndSwap64(long remoteAddress, RemoteKey key, long expected, long desired) {
        return fetch(Request.Kind.CSWAP, null, remoteAddress, key, 8, desired, expected);
    }

    @SuppressWarnings("unchecked")
    private <T> CompletionStage<T> fetch(Request.Kind kind, AtomicOp op, long remoteAddress, RemoteKey key, int width,
            long operand, long compare) {
        FencelineException bad = check(remoteAddress, key, width, width);
        if (bad != null) {
            return CompletableFuture.failedFuture(bad);
        }
        EndpointChannel.Grant g = channel.validGrant();
        if (g != null) {
            try {
                Long old = g.lane().atomicFetchNow(key, remoteAddress, kind == Request.Kind.CSWAP ? null : op, width,
                        operand, compare);
                if (old != null) {
                    channel.fastOperation();
                    Object value = width == 4 ? (Object) old.intValue() : (Object) old;
                    return (CompletionStage<T>) CompletableFuture.completedStage(value);
                }
            } catch (FencelineException e) {
                channel.fastFailure();
                return CompletableFuture.failedFuture(e);
            }
        }
        Request r = Request.atomic(kind, epoch(), remoteAddress, key, op, width, operand, compare);
        return (CompletionStage<T>) submit(r);
    }

    @Override
    public CompletionStage<Void> sendActiveMessage(int id, ByteBuffer header, ByteBuffer payload) {
        try {
            RegistrationTable.checkAmId(id);
        } catch (FencelineException e) {
            return CompletableFuture.failedFuture(e);
        }
        ByteBuffer h = header == null ? ByteBuffer.allocate(0) : header.slice();
        ByteBuffer p = payload == null ? ByteBuffer.allocate(0) : payload.slice();
        return submitVoid(Request.activeMessage(id, h, p));
    }

    @Override
    public void sendActiveMessageImplicit(int id, ByteBuffer header, ByteBuffer payload) {
        RegistrationTable.checkAmId(id);
        ByteBuffer h = header == null ? EMPTY : header;
        ByteBuffer p = payload == null ? EMPTY : payload;
        EndpointChannel.Grant g = channel.validGrant();
        if (g != null && g.activeMessages()) {
            try {
                if (g.lane().activeMessageNow(id, h, p, channel.endpointId(), channel.directAnswers)) {
                    channel.fastMessage();
                    return;
                }
            } catch (FencelineException e) { // refused before it was queued: the next flush reports it
                channel.fastFailure();
                channel.implicitFailed(e, channel.submissionCount());
                return;
            }
        }
        // The slow path keeps the bytes until the actor has written them: copy, as promised.
        submitImplicit(Request.activeMessage(id, copy(h), copy(p)));
    }

    /**
     * A stage completed on a transport's polling thread, handed to the actor system's dispatcher, so
     * that what the user chains on it never runs on (or blocks) that thread.
     */
    private <T> CompletionStage<T> onDispatcher(CompletableFuture<T> f) {
        CompletableFuture<T> out = new CompletableFuture<>();
        f.whenComplete((v, e) -> {
            Runnable complete = () -> {
                if (e == null) {
                    out.complete(v);
                } else {
                    out.completeExceptionally(e);
                }
            };
            try {
                system.executionContext().execute(complete);
            } catch (RuntimeException dispatcherGone) { // shutting down: complete here rather than never
                complete.run();
            }
        });
        return out;
    }

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private static ByteBuffer copy(ByteBuffer b) {
        return b.remaining() == 0 ? EMPTY : ByteBuffer.allocateDirect(b.remaining()).put(b.duplicate()).flip();
    }

    @Override
    public void fence() {
        endpointFences.incrementAndGet();
    }

    @Override
    public CompletionStage<Void> flush() {
        if (!channel.isClosing() && channel.failure() == null && channel.validGrant() != null) {
            // A valid grant means nothing is outstanding at the actor and every direct operation but
            // an active message was complete on return. So the flush waits at most for the answers
            // to direct active messages, without the actor: keeping the grant keeps the fast path.
            channel.fastFlush();
            long before = channel.submissionCount() + 1;
            long target = channel.directSent();
            if (channel.directAnswered() < target) {
                return onDispatcher(channel.directFlush(target, before));
            }
            FencelineException first = channel.flushError(before, target);
            return first == null ? DONE : CompletableFuture.failedStage(first);
        }
        return submitVoid(Request.flush(epoch()));
    }


    @Override
    public List<LaneInfo> lanes() {
        return channel.lanes();
    }

    @Override
    public WorkerAddress peer() {
        return channel.peer();
    }

    /**
     * Refuses new operations at once, flushes everything issued before (the flush is queued behind
     * it), then tells the actor to close its lanes.
     */
    @Override
    public CompletionStage<Void> close() {
        if (!closeStarted.compareAndSet(false, true)) {
            return closed;
        }
        channel.markClosing();
        if (channel.terminal() != null) {
            closedNow(); // failed or closed already: nothing to flush
            return closed;
        }
        Request flush = Request.flush(epoch());
        channel.submit(flush);
        flush.future()
                .handle((v, e) -> {
                    if (e != null) {
                        // An implicit operation before the close failed: nothing else will say so.
                        LoggerFactory.getLogger(EndpointImpl.class).warn("endpoint {} closed after a failure: {}",
                                channel.name(), e.toString());
                    }
                    return AskPattern.<EndpointActor.Command, Done>ask(actor, EndpointActor.Close::new,
                            closeTimeout, system.scheduler());
                })
                .thenCompose(stage -> stage)
                .whenComplete((d, e) -> closedNow());
        return closed;
    }

    private FencelineException check(long remoteAddress, RemoteKey key, long bytes, int align) {
        if (channel.isClosing()) {
            return new EndpointClosedException("endpoint " + channel.name() + " is closed");
        }
        if (channel.failure() != null) {
            return channel.failure();
        }
        if (key == null) {
            return new RemoteAccessException(Reason.UNKNOWN_KEY, "remote key is null");
        }
        if (!key.ownerId().equals(channel.peer().workerId())) {
            return new RemoteAccessException(Reason.WRONG_PEER, "key " + key.shortKey() + " belongs to worker "
                    + key.ownerId() + ", but endpoint " + channel.name() + " leads to " + channel.peer());
        }
        try {
            key.checkBounds(remoteAddress, bytes);
        } catch (RemoteAccessException e) {
            return e;
        }
        if (align > 1 && (remoteAddress & (align - 1)) != 0) {
            return RegistrationTable.misaligned(remoteAddress, align);
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private CompletionStage<Void> submitVoid(Request r) {
        return (CompletionStage<Void>) (CompletionStage<?>) submit(r);
    }

    private CompletionStage<Object> submit(Request r) {
        if (channel.isClosing()) {
            return CompletableFuture.failedFuture(new EndpointClosedException("endpoint " + channel.name() + " is closed"));
        }
        if (channel.failure() != null) {
            return CompletableFuture.failedFuture(channel.failure());
        }
        channel.submit(r);
        return r.future();
    }

    @Override
    public String toString() {
        return "Endpoint[" + channel.name() + " -> " + channel.peer().name() + "]";
    }
}
