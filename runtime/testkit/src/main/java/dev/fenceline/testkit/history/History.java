package dev.fenceline.testkit.history;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.LaneInfo;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.RequestTrace;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A record of every call made through the endpoints it wraps, and of how each completed. Wrap an
 * endpoint with {@link #record(Endpoint)} and use the wrapper exactly as the endpoint; then check the
 * record with {@link HistoryChecker}. Thread-safe.
 *
 * <p>It records what an application observes (issue order, results, completion order) over any
 * transport, and, through {@link RequestTrace}, what happens inside: when the endpoint admitted
 * each fragment to a lane and, where the transport can tell (the {@code sim} transport and the fast
 * path), when the target applied it. See {@link #events(Op)}.
 */
public final class History {
    private final AtomicLong issueOrder = new AtomicLong();
    private final AtomicLong completionOrder = new AtomicLong();
    private final AtomicLong eventOrder = new AtomicLong();
    private final Map<Long, List<Event>> events = new ConcurrentHashMap<>();
    private final AtomicInteger endpoints = new AtomicInteger();
    private final Map<Long, Op> ops = new ConcurrentHashMap<>();
    private final Map<Long, Outcome> outcomes = new ConcurrentHashMap<>();
    /** Fences per (endpoint, thread). */
    private final Map<String, AtomicLong> fences = new ConcurrentHashMap<>();

    /**
     * @param ep the endpoint to record
     * @return an endpoint that forwards every call to {@code ep} and records it
     */
    public Endpoint record(Endpoint ep) {
        return new Recording(ep, endpoints.incrementAndGet());
    }

    /** @return every recorded call, in issue order */
    public List<Op> ops() {
        List<Op> list = new ArrayList<>(ops.values());
        list.sort(Comparator.comparingLong(Op::id));
        return list;
    }

    /**
     * @param op a recorded call
     * @return how it completed, or null while it has not
     */
    public Outcome outcome(Op op) {
        return outcomes.get(op.id());
    }

    /**
     * @param op a recorded call
     * @return its events in order: issued, then each admission and visibility the runtime
     *     reported, then its completion (when it completed)
     */
    public List<Event> events(Op op) {
        List<Event> list = events.get(op.id());
        if (list == null) {
            return List.of();
        }
        synchronized (list) {
            return List.copyOf(list);
        }
    }

    private void event(long opId, Event.Kind kind, int lane, long sequence) {
        event(opId, kind, lane, sequence, false, false);
    }

    private void event(long opId, Event.Kind kind, int lane, long sequence, boolean deduplicated, boolean reported) {
        List<Event> list = events.computeIfAbsent(opId, k -> new ArrayList<>(4));
        synchronized (list) { // the order is taken under the lock, so each list stays sorted
            list.add(new Event(eventOrder.incrementAndGet(), opId, kind, lane, sequence, deduplicated, reported));
        }
    }

    /** The runtime's reports on one call. */
    private RequestTrace tracer(Op op) {
        return new RequestTrace() {
            @Override
            public void admitted(int lane, long sequence, boolean deduplicated, boolean visibilityReported) {
                event(op.id(), Event.Kind.ADMITTED, lane, sequence, deduplicated, visibilityReported);
            }

            @Override
            public void visible(long sequence) {
                event(op.id(), Event.Kind.VISIBLE, Event.NO_LANE, sequence);
            }
        };
    }

    /** Makes one endpoint call with {@code op}'s tracer attached. */
    private <T> T traced(Op op, Supplier<T> call) {
        return RequestTrace.during(tracer(op), call);
    }

    private void tracedVoid(Op op, Runnable call) {
        RequestTrace.during(tracer(op), () -> {
            call.run();
            return null;
        });
    }

    /** The calling thread's fence count on an endpoint. */
    private AtomicLong fenceCount(int endpoint) {
        return fences.computeIfAbsent(endpoint + "/" + Thread.currentThread().getId(), k -> new AtomicLong());
    }

    private Op issue(int endpoint, Op.Kind kind, long address, int length, long operand, byte[] data) {
        Op op = new Op(issueOrder.incrementAndGet(), endpoint, Thread.currentThread().getId(), kind, address, length,
                operand, data, fenceCount(endpoint).get());
        ops.put(op.id(), op);
        event(op.id(), Event.Kind.ISSUED, Event.NO_LANE, -1);
        return op;
    }

    private <T> CompletionStage<T> track(Op op, CompletionStage<T> stage, ByteBuffer readInto) {
        return stage.whenComplete((v, e) -> {
            byte[] read = null;
            if (e == null && readInto != null) {
                read = new byte[readInto.remaining()];
                readInto.duplicate().get(read);
            }
            long value = v instanceof Number n ? n.longValue() : 0;
            event(op.id(), Event.Kind.COMPLETED, Event.NO_LANE, -1);
            outcomes.put(op.id(), new Outcome(completionOrder.incrementAndGet(), value, read,
                    e == null ? null : (e instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                            ? c.getCause() : e)));
        });
    }

    /**
     * An implicit operation completes with the next flush; the flush's failure is the first error of
     * any implicit operation before it, not necessarily this one's: recorded as an unknown outcome
     * (the stage passed on keeps the flush's own).
     */
    private CompletionStage<Void> trackImplicit(Op op, CompletionStage<Void> flush) {
        return flush.whenComplete((v, e) -> {
            event(op.id(), Event.Kind.COMPLETED, Event.NO_LANE, -1);
            Throwable cause = e instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                    ? c.getCause() : e;
            outcomes.put(op.id(), new Outcome(completionOrder.incrementAndGet(), 0, null, cause == null ? null
                    : new dev.fenceline.OutcomeUnknownException("the flush after this implicit operation failed: "
                            + cause.getMessage(), cause)));
        });
    }

    private final class Recording implements Endpoint {
        private final Endpoint ep;
        private final int id;
        /** Implicit operations issued since the last flush: that flush completes them. */
        private final List<Op> implicitPending = new ArrayList<>();

        Recording(Endpoint ep, int id) {
            this.ep = ep;
            this.id = id;
        }

        @Override
        public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
            byte[] data = new byte[src.remaining()];
            src.duplicate().get(data);
            Op op = issue(id, Op.Kind.PUT, remoteAddress, data.length, 0, data);
            return track(op, traced(op, () -> ep.put(src, remoteAddress, key)), null);
        }

        @Override
        public CompletionStage<Void> get(ByteBuffer dst, long remoteAddress, RemoteKey key) {
            Op op = issue(id, Op.Kind.GET, remoteAddress, dst.remaining(), 0, null);
            return track(op, traced(op, () -> ep.get(dst, remoteAddress, key)), dst.duplicate());
        }

        /** ADDs are modelled by the checker; other atomics are recorded as such. */
        private Op atomic(AtomicOp o, boolean fetch, long remoteAddress, int width, long operand) {
            Op.Kind kind = o != AtomicOp.ADD ? Op.Kind.OTHER_ATOMIC : fetch ? Op.Kind.ADD_FETCH : Op.Kind.ADD_POST;
            return issue(id, kind, remoteAddress, width, operand, null);
        }

        @Override
        public CompletionStage<Void> atomicPost32(AtomicOp o, long remoteAddress, RemoteKey key, int operand) {
            Op op = atomic(o, false, remoteAddress, 4, operand);
            return track(op, traced(op, () -> ep.atomicPost32(o, remoteAddress, key, operand)), null);
        }

        @Override
        public CompletionStage<Void> atomicPost64(AtomicOp o, long remoteAddress, RemoteKey key, long operand) {
            Op op = atomic(o, false, remoteAddress, 8, operand);
            return track(op, traced(op, () -> ep.atomicPost64(o, remoteAddress, key, operand)), null);
        }

        @Override
        public CompletionStage<Integer> atomicFetch32(AtomicOp o, long remoteAddress, RemoteKey key, int operand) {
            Op op = atomic(o, true, remoteAddress, 4, operand);
            return track(op, traced(op, () -> ep.atomicFetch32(o, remoteAddress, key, operand)), null);
        }

        @Override
        public CompletionStage<Long> atomicFetch64(AtomicOp o, long remoteAddress, RemoteKey key, long operand) {
            Op op = atomic(o, true, remoteAddress, 8, operand);
            return track(op, traced(op, () -> ep.atomicFetch64(o, remoteAddress, key, operand)), null);
        }

        @Override
        public CompletionStage<Integer> compareAndSwap32(long remoteAddress, RemoteKey key, int expected, int desired) {
            Op op = issue(id, Op.Kind.OTHER_ATOMIC, remoteAddress, 4, desired, null);
            return track(op, traced(op, () -> ep.compareAndSwap32(remoteAddress, key, expected, desired)), null);
        }

        @Override
        public CompletionStage<Long> compareAndSwap64(long remoteAddress, RemoteKey key, long expected, long desired) {
            Op op = issue(id, Op.Kind.OTHER_ATOMIC, remoteAddress, 8, desired, null);
            return track(op, traced(op, () -> ep.compareAndSwap64(remoteAddress, key, expected, desired)), null);
        }

        @Override
        public CompletionStage<Void> sendActiveMessage(int amId, ByteBuffer header, ByteBuffer payload) {
            Op op = issue(id, Op.Kind.MESSAGE, 0, payload == null ? 0 : payload.remaining(), amId, null);
            return track(op, traced(op, () -> ep.sendActiveMessage(amId, header, payload)), null);
        }

        @Override
        public void sendActiveMessageImplicit(int amId, ByteBuffer header, ByteBuffer payload) {
            Op op = issue(id, Op.Kind.MESSAGE, 0, payload == null ? 0 : payload.remaining(), amId, null);
            implicit(op, () -> tracedVoid(op, () -> ep.sendActiveMessageImplicit(amId, header, payload)));
        }

        @Override
        public void fence() {
            issue(id, Op.Kind.FENCE, 0, 0, 0, null);
            fenceCount(id).incrementAndGet();
            ep.fence();
        }

        @Override
        public CompletionStage<Void> flush() {
            Op op = issue(id, Op.Kind.FLUSH, 0, 0, 0, null);
            List<Op> implicit;
            synchronized (implicitPending) {
                implicit = new ArrayList<>(implicitPending);
                implicitPending.clear();
            }
            // An implicit operation completes, or fails, with the next flush: recorded as completed
            // just before it. Chained, not side by side: a stage runs its dependents last-in first.
            CompletionStage<Void> done = traced(op, ep::flush);
            for (Op i : implicit) {
                done = trackImplicit(i, done);
            }
            return track(op, done, null);
        }

        @Override
        public void putImplicit(ByteBuffer src, long remoteAddress, RemoteKey key) {
            byte[] data = new byte[src.remaining()];
            src.duplicate().get(data);
            Op op = issue(id, Op.Kind.PUT, remoteAddress, data.length, 0, data);
            implicit(op, () -> tracedVoid(op, () -> ep.putImplicit(src, remoteAddress, key)));
        }

        @Override
        public void atomicPostImplicit64(AtomicOp o, long remoteAddress, RemoteKey key, long operand) {
            Op op = atomic(o, false, remoteAddress, 8, operand);
            implicit(op, () -> tracedVoid(op, () -> ep.atomicPostImplicit64(o, remoteAddress, key, operand)));
        }

        /** Issues an implicit operation; one refused at once is recorded failed at once. */
        private void implicit(Op op, Runnable issue) {
            try {
                issue.run();
            } catch (RuntimeException e) {
                track(op, java.util.concurrent.CompletableFuture.failedFuture(e), null);
                throw e;
            }
            synchronized (implicitPending) {
                implicitPending.add(op);
            }
        }

        @Override
        public List<LaneInfo> lanes() {
            return ep.lanes();
        }

        @Override
        public dev.fenceline.EndpointStatistics statistics() {
            return ep.statistics();
        }

        @Override
        public WorkerAddress peer() {
            return ep.peer();
        }

        @Override
        public CompletionStage<Void> close() {
            return ep.close();
        }

        @Override
        public void abort(String reason) {
            ep.abort(reason);
        }

        @Override
        public void probeLanes() {
            ep.probeLanes();
        }

        @Override
        public String toString() {
            return "Recorded[" + ep + "]";
        }
    }
}
