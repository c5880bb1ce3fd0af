package dev.fenceline.actor;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The calling thread's side of the fast path by grant (docs/architecture.md): while the actor's grant is
 * valid, an operation is done on this thread by the granted lane, complete and visible on return
 * (an active message is queued, and answered later). Each method says whether it was done here; a
 * lane's refusal (a bad key, a closed region) is thrown as the slow path would report it. Any thread.
 */
final class FastPath {
    /**
     * What every operation done on the fast path returns: one shared, completed stage (a minimal
     * stage cannot be completed again, and its {@code toCompletableFuture()} is a fresh copy), so the
     * fast path allocates nothing per put or posted atomic.
     */
    static final CompletionStage<Void> DONE = CompletableFuture.completedStage(null);

    private final EndpointChannel channel;
    private final Executor dispatcher;

    /**
     * @param channel the endpoint's channel
     * @param dispatcher where a stage completed on a transport's thread is handed to
     */
    FastPath(EndpointChannel channel, Executor dispatcher) {
        this.channel = channel;
        this.dispatcher = dispatcher;
    }

    /** @return the grant if it is valid and for a lane that takes posted operations, else null */
    GrantSlot.Grant postingGrant() {
        GrantSlot.Grant g = channel.grant().valid();
        return g != null && g.posting() != null ? g : null;
    }

    /**
     * Posts a request on the granted lane from this thread (the lane numbers it, writes it, and its
     * answer completes the request there: on the transport's reading thread, which runs what the
     * user chained on it, in completion order, as the actor does on its own thread).
     *
     * @param g a grant from {@link #postingGrant()}
     * @param r the request
     * @param op what the lane sends
     * @return whether the lane took it; if not, nothing was sent and the caller submits {@code r}
     *     (as it must when a get of an earlier epoch is unanswered: the actor's barrier then holds it
     *     until that answer, as an RDMA fence holds a write behind the reads before it)
     */
    boolean post(GrantSlot.Grant g, Request r, TransportOp op) {
        DirectLedger ledger = channel.direct();
        boolean read = r.kind == Request.Kind.GET;
        if (!read && ledger.readPostedBefore(r.epoch)) {
            return false;
        }
        ledger.postingStarted(); // before the lane checks the grant: the actor's barrier sees it
        PostedRequest p = new PostedRequest(channel, g, r, op);
        if (read) {
            p.readOpened(); // before the lane can send it: a write fenced after it sees it open
        }
        boolean taken = false;
        try {
            r.trace = dev.fenceline.spi.support.Tracing.take();
            op.trace(r.trace);
            taken = g.posting().postNow(p);
            if (taken) {
                channel.keepaliveNow(); // after the ledger counts it sent: see Operations.scheduleKeepalive()
            }
        } finally {
            if (!taken) {
                p.readClosed();
                ledger.postingEnded(1);
            }
        }
        return taken; // counted by the direct ledger when the lane numbers it
    }

    /** @return a token for a posted operation */
    long postedToken() {
        return channel.direct().postedToken();
    }

    /** @return the grant if it is valid and for a lane that acts complete on return, else null */
    private GrantSlot.Grant accessGrant() {
        GrantSlot.Grant g = channel.grant().valid();
        return g != null && g.lane() != null ? g : null;
    }

    /** @return whether the put was done here */
    boolean put(ByteBuffer src, long remoteAddress, RemoteKey key) {
        GrantSlot.Grant g = accessGrant();
        return g != null && done(g.lane().putNow(key, remoteAddress, src));
    }

    /** @return whether the get was done here */
    boolean get(ByteBuffer dst, long remoteAddress, RemoteKey key) {
        GrantSlot.Grant g = accessGrant();
        return g != null && done(g.lane().getNow(key, remoteAddress, dst));
    }

    /** @return whether the posted atomic was done here */
    boolean atomicPost(AtomicOp op, long remoteAddress, RemoteKey key, int width, long operand) {
        GrantSlot.Grant g = accessGrant();
        return g != null && done(g.lane().atomicPostNow(key, remoteAddress, op, width, operand));
    }

    /** @return the old value (sign-extended for width 4) if the fetching atomic was done here, else null */
    Long fetch(AtomicOp op, long remoteAddress, RemoteKey key, int width, long operand, long compare) {
        GrantSlot.Grant g = accessGrant();
        if (g == null) {
            return null;
        }
        Long old = g.lane().atomicFetchNow(key, remoteAddress, op, width, operand, compare);
        if (old != null) {
            channel.fast().operation();
        }
        return old;
    }

    /** @return whether the active message was queued here (its answer comes to the direct ledger) */
    boolean activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
        // Counted from before the grant check until the ledger counts it sent: the actor does not
        // move the grant to another lane while a message may still go out on this one.
        DirectLedger ledger = channel.direct();
        ledger.postingStarted();
        try {
            GrantSlot.Grant g = accessGrant();
            if (g == null || !g.activeMessages()
                    || !g.lane().activeMessageNow(id, header, payload, channel.endpointId(), ledger.answers)) {
                return false;
            }
        } finally {
            ledger.postingEnded(1);
        }
        channel.keepaliveNow(); // after the ledger counts it sent: see Operations.scheduleKeepalive()
        channel.fast().message();
        return true;
    }

    private boolean done(boolean done) {
        if (done) {
            channel.fast().operation();
        }
        return done;
    }

    /**
     * A flush under a valid grant: nothing is outstanding at the actor and every direct operation but
     * an active message was complete on return, so it waits at most for the answers to direct active
     * messages, without the actor (keeping the grant keeps the fast path).
     *
     * @return the flush's stage, or null if there is no grant (the actor must flush)
     */
    CompletionStage<Void> flush() {
        if (OriginChecks.open(channel) != null || channel.grant().valid() == null || channel.grant().completing()) {
            return null; // no grant, or a request taken before it is still completing: the actor flushes
        }
        channel.fast().flush();
        long before = channel.submissions().submitted() + 1;
        long target = channel.direct().sent();
        if (channel.direct().answered() < target) {
            return onDispatcher(channel.direct().flush(target, before)); // completed on the answering thread
        }
        FencelineException first = channel.flushError(before, target);
        return first == null ? DONE : CompletableFuture.failedStage(first);
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
                dispatcher.execute(complete);
            } catch (RuntimeException dispatcherGone) { // shutting down: complete here rather than never
                complete.run();
            }
        });
        return out;
    }

    /**
     * A refusal on the fast path: counted, and thrown to the caller or (for an operation without a
     * completion of its own) kept for the next flush.
     *
     * @param e the lane's refusal
     * @param implicit whether the operation has no completion of its own
     */
    void refused(FencelineException e, boolean implicit) {
        channel.fast().failure();
        if (implicit) {
            channel.implicit().failed(e, channel.submissions().submitted()); // for the next flush to report
        }
    }
}
