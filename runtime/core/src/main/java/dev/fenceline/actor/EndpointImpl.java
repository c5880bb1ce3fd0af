package dev.fenceline.actor;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.FencelineException;
import dev.fenceline.EndpointStatistics;
import dev.fenceline.LaneInfo;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.RegistrationTable;
import dev.fenceline.internal.VarHandles;
import dev.fenceline.spi.TransportOp;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * The user's handle on an endpoint. Validates what can be checked at the origin (key owner, bounds,
 * alignment, operation), stamps the epoch and hands the request to the actor through the channel.
 * Never reads actor state.
 */
final class EndpointImpl implements Endpoint {
    private static final VarHandle FENCES = VarHandles.field(MethodHandles.lookup(), "endpointFences", long.class);
    private static final VarHandle CLOSED = VarHandles.field(MethodHandles.lookup(), "closed",
            CompletableFuture.class);

    private final EndpointChannel channel;
    private final FastPath fast;
    private final AtomicLong workerEpoch;
    /** Fences issued on this endpoint (fields with handles, not atomic objects: less heap per endpoint). */
    private volatile long endpointFences;
    private final ActorSystem<?> system;
    private final Duration closeTimeout;
    /** The close's stage, set by the first close (an endpoint that is never closed holds none). */
    private volatile CompletableFuture<Void> closed;
    private volatile ActorRef<EndpointProtocol.Command> actor;
    /** Set once its worker forgot it (closed); volatile for the counters file's thread. */
    private volatile boolean forgotten;

    EndpointImpl(EndpointChannel channel, AtomicLong workerEpoch, ActorSystem<?> system, Duration closeTimeout) {
        this.channel = channel;
        this.workerEpoch = workerEpoch;
        this.system = system;
        this.closeTimeout = closeTimeout;
        // A stub system (tests) never completes a flush on a transport's thread.
        this.fast = new FastPath(channel, system == null ? Runnable::run : system.executionContext());
    }

    void actor(ActorRef<EndpointProtocol.Command> ref) {
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

    /**
     * @param cleanly false if the actor did not confirm the close: it may still count, so it is not forgotten
     * @param error what the close reports (the failure of its flush, or of the close itself), or null
     */
    private void closedNow(boolean cleanly, Throwable error) {
        if (cleanly) {
            onClosed.run();
        }
        if (error == null) {
            closed.complete(null); // set by close(), the only way here
        } else {
            closed.completeExceptionally(error);
        }
    }

    /** The worker forgot this endpoint: it was closed, and the worker lists it no more. */
    void forgotten() {
        forgotten = true;
    }

    /** @return whether the worker forgot it (closed and no longer listed) */
    boolean isForgotten() {
        return forgotten;
    }

    /** The epoch a request captures at issue: worker fences plus this endpoint's own fences. */
    private long epoch() {
        return workerEpoch.get() + endpointFences;
    }

    @Override
    public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
        return rma(Request.Kind.PUT, src, remoteAddress, key);
    }

    @Override
    public CompletionStage<Void> get(ByteBuffer dst, long remoteAddress, RemoteKey key) {
        FencelineException bad = OriginChecks.writable(dst);
        return bad != null ? CompletableFuture.failedFuture(bad) : rma(Request.Kind.GET, dst, remoteAddress, key);
    }

    private CompletionStage<Void> rma(Request.Kind kind, ByteBuffer local, long remoteAddress, RemoteKey key) {
        Objects.requireNonNull(local, "buffer");
        FencelineException bad = OriginChecks.access(channel, remoteAddress, key, local.remaining(), 1,
                kind == Request.Kind.GET ? Access.READ : Access.WRITE);
        if (bad != null) {
            return CompletableFuture.failedFuture(bad);
        }
        try {
            if (kind == Request.Kind.PUT ? fast.put(local, remoteAddress, key) : fast.get(local, remoteAddress, key)) {
                return FastPath.DONE;
            }
        } catch (FencelineException e) {
            fast.refused(e, false);
            return CompletableFuture.failedFuture(e);
        }
        GrantSlot.Grant g = fast.postingGrant();
        if (g != null) {
            Request r = Request.rma(kind, epoch(), local.slice(), remoteAddress, key);
            return voidStage(postOrSubmit(g, r, TransportOp.rma(kind == Request.Kind.PUT ? TransportOp.Kind.PUT
                    : TransportOp.Kind.GET, fast.postedToken(), remoteAddress, key, r.local)));
        }
        return submitVoid(Request.rma(kind, epoch(), local.slice(), remoteAddress, key));
    }

    /**
     * Posts a request on the granted lane from this thread, or submits it if the lane does not take
     * it now.
     */
    private CompletionStage<Object> postOrSubmit(GrantSlot.Grant g, Request r, TransportOp op) {
        try {
            if (fast.post(g, r, op)) {
                return r.future();
            }
        } catch (FencelineException e) {
            fast.refused(e, false);
            return CompletableFuture.failedFuture(e);
        }
        return submit(r);
    }

    /**
     * Posts an implicit operation on the granted lane from this thread, or submits it.
     *
     * @param explicit the operation, built to be posted
     * @param op what the lane sends
     */
    private void postOrSubmitImplicit(GrantSlot.Grant g, Request explicit, TransportOp op) {
        Request r = Request.implicit(explicit, channel.implicit()::failed);
        r.submissionNumber = g.stamp(); // its error sorts after everything submitted before it
        try {
            if (fast.post(g, r, op)) {
                return;
            }
        } catch (FencelineException e) {
            fast.refused(e, true);
            return;
        }
        FencelineException closed = OriginChecks.open(channel);
        if (closed != null) {
            throw closed;
        }
        channel.submit(r);
    }

    @SuppressWarnings("unchecked")
    private static CompletionStage<Void> voidStage(CompletionStage<Object> s) {
        return (CompletionStage<Void>) (CompletionStage<?>) s;
    }

    @Override
    public void putImplicit(ByteBuffer src, long remoteAddress, RemoteKey key) {
        Objects.requireNonNull(src, "src");
        FencelineException bad = OriginChecks.access(channel, remoteAddress, key, src.remaining(), 1, Access.WRITE);
        if (bad != null) {
            throw bad;
        }
        try {
            if (fast.put(src, remoteAddress, key)) {
                return;
            }
        } catch (FencelineException e) {
            fast.refused(e, true);
            return;
        }
        GrantSlot.Grant g = fast.postingGrant();
        if (g != null) {
            Request r = Request.rma(Request.Kind.PUT, epoch(), src.slice(), remoteAddress, key);
            postOrSubmitImplicit(g, r, TransportOp.rma(TransportOp.Kind.PUT, fast.postedToken(), remoteAddress, key,
                    r.local));
            return;
        }
        submitImplicit(Request.rma(Request.Kind.PUT, epoch(), src.slice(), remoteAddress, key));
    }

    @Override
    public void atomicPostImplicit64(AtomicOp op, long remoteAddress, RemoteKey key, long operand) {
        FencelineException bad = postCheck(op, remoteAddress, key, 8);
        if (bad != null) {
            throw bad;
        }
        try {
            if (fast.atomicPost(op, remoteAddress, key, 8, operand)) {
                return;
            }
        } catch (FencelineException e) {
            fast.refused(e, true);
            return;
        }
        GrantSlot.Grant g = fast.postingGrant();
        if (g != null) {
            postOrSubmitImplicit(g, Request.atomic(Request.Kind.ATOMIC_POST, epoch(), remoteAddress, key, op, 8, operand,
                    0), TransportOp.atomic(TransportOp.Kind.ATOMIC_POST, fast.postedToken(), remoteAddress, key, op, 8,
                    operand, 0));
            return;
        }
        submitImplicit(Request.atomic(Request.Kind.ATOMIC_POST, epoch(), remoteAddress, key, op, 8, operand, 0));
    }

    private FencelineException postCheck(AtomicOp op, long remoteAddress, RemoteKey key, int width) {
        Objects.requireNonNull(op, "op");
        FencelineException bad = OriginChecks.postable(op, width);
        return bad != null ? bad : OriginChecks.access(channel, remoteAddress, key, width, width, Access.ATOMIC);
    }

    private void submitImplicit(Request r) {
        FencelineException closed = OriginChecks.open(channel);
        if (closed != null) {
            throw closed;
        }
        channel.submit(Request.implicit(r, channel.implicit()::failed));
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
        FencelineException bad = postCheck(op, remoteAddress, key, width);
        if (bad != null) {
            return CompletableFuture.failedFuture(bad);
        }
        try {
            if (fast.atomicPost(op, remoteAddress, key, width, operand)) {
                return FastPath.DONE;
            }
        } catch (FencelineException e) {
            fast.refused(e, false);
            return CompletableFuture.failedFuture(e);
        }
        GrantSlot.Grant g = fast.postingGrant();
        if (g != null) {
            return voidStage(postOrSubmit(g, Request.atomic(Request.Kind.ATOMIC_POST, epoch(), remoteAddress, key, op,
                    width, operand, 0), TransportOp.atomic(TransportOp.Kind.ATOMIC_POST,
                    fast.postedToken(), remoteAddress, key, op, width, operand, 0)));
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
        FencelineException bad = OriginChecks.access(channel, remoteAddress, key, width, width, Access.ATOMIC);
        if (bad != null) {
            return CompletableFuture.failedFuture(bad);
        }
        try {
            Long old = fast.fetch(kind == Request.Kind.CSWAP ? null : op, remoteAddress, key, width, operand, compare);
            if (old != null) {
                Object value = width == 4 ? (Object) old.intValue() : (Object) old;
                // A future of its own, as the actor's path returns: toCompletableFuture() is itself, so a
                // caller that checks for a done result allocates nothing more
                return (CompletionStage<T>) CompletableFuture.completedFuture(value);
            }
        } catch (FencelineException e) {
            fast.refused(e, false);
            return CompletableFuture.failedFuture(e);
        }
        GrantSlot.Grant g = fast.postingGrant();
        if (g != null) {
            return (CompletionStage<T>) postOrSubmit(g, Request.atomic(kind, epoch(), remoteAddress, key, op, width,
                    operand, compare), TransportOp.atomic(kind == Request.Kind.CSWAP
                    ? TransportOp.Kind.CSWAP : TransportOp.Kind.ATOMIC_FETCH, fast.postedToken(), remoteAddress, key,
                    op, width, operand, compare));
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
        try {
            if (fast.activeMessage(id, h, p)) {
                return;
            }
        } catch (FencelineException e) { // refused before it was queued: the next flush reports it
            fast.refused(e, true);
            return;
        }
        // The slow path keeps the bytes until the actor has written them: copy, as promised.
        submitImplicit(Request.activeMessage(id, copy(h), copy(p)));
    }

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private static ByteBuffer copy(ByteBuffer b) {
        return b.remaining() == 0 ? EMPTY : ByteBuffer.allocateDirect(b.remaining()).put(b.duplicate()).flip();
    }

    @Override
    public void fence() {
        FENCES.getAndAdd(this, 1L);
    }

    @Override
    public CompletionStage<Void> flush() {
        CompletionStage<Void> direct = fast.flush();
        if (direct != null) {
            return direct;
        }
        FencelineException ended = OriginChecks.open(channel);
        if (ended != null) {
            // An implicit operation before it that may have been applied, failed with the end, is
            // what it reports: the end alone would say that none was applied.
            return CompletableFuture.failedFuture(channel.implicit().endOfFlushSeen(
                    channel.submissions().submitted() + 1, ended));
        }
        return submitVoid(Request.flush(epoch()));
    }

    @Override
    public List<LaneInfo> lanes() {
        return channel.lanes();
    }

    @Override
    public EndpointStatistics statistics() {
        return Totals.statisticsOf(channel);
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
        CompletableFuture<Void> mine = new CompletableFuture<>();
        @SuppressWarnings("unchecked")
        CompletableFuture<Void> first = (CompletableFuture<Void>) CLOSED.compareAndExchange(this, null, mine);
        if (first != null) {
            return first;
        }
        channel.markClosing();
        if (channel.terminal() != null) {
            closedNow(true, null); // failed or closed already: nothing to flush
            return closed;
        }
        Request flush = Request.flush(epoch());
        channel.submit(flush);
        // What the flush says, never exceptional itself: an implicit operation before the close failed.
        // The endpoint's own end is no news to report (close releases a failed endpoint quietly).
        CompletableFuture<Throwable> flushed = flush.future().toCompletableFuture().handle((v, e) -> {
            Throwable failed = unwrap(e);
            return failed != null && failed == channel.terminal() ? null : failed;
        });
        flushed.thenCompose(failed -> AskPattern.<EndpointProtocol.Command, Done>ask(actor, EndpointProtocol.Close::new,
                        closeTimeout, system.scheduler()))
                .whenComplete((d, notConfirmed) -> {
                    if (notConfirmed == null) {
                        closedNow(true, flushed.join()); // done: join does not wait
                    } else {
                        closedNow(false, new FencelineException("endpoint " + channel.name() + ": its actor did not"
                                + " confirm the close within " + closeTimeout + " (it may still be closing)",
                                unwrap(notConfirmed)));
                    }
                });
        return closed;
    }

    /** @return what a stage's failure was, without the CompletionException around it */
    static Throwable unwrap(Throwable e) {
        return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    @Override
    public void abort(String reason) {
        Objects.requireNonNull(reason, "reason");
        ActorRef<EndpointProtocol.Command> a = actor;
        if (a != null && channel.terminal() == null) {
            a.tell(new EndpointProtocol.Abort(reason));
        }
    }

    @Override
    public void probeLanes() {
        ActorRef<EndpointProtocol.Command> a = actor;
        if (a != null && channel.terminal() == null) {
            a.tell(EndpointProtocol.ProbeLanes.INSTANCE);
        }
    }

    @SuppressWarnings("unchecked")
    private CompletionStage<Void> submitVoid(Request r) {
        return (CompletionStage<Void>) (CompletionStage<?>) submit(r);
    }

    private CompletionStage<Object> submit(Request r) {
        FencelineException closed = OriginChecks.open(channel);
        if (closed != null) {
            return CompletableFuture.failedFuture(closed);
        }
        channel.submit(r);
        return r.future();
    }

    @Override
    public String toString() {
        return "Endpoint[" + channel.name() + " -> " + channel.peer().name() + "]";
    }
}
