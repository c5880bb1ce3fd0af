package dev.fenceline.perf;

import dev.fenceline.AtomicOp;
import dev.fenceline.CallerProgress;
import dev.fenceline.Endpoint;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * Runs one test at one size. Latency tests record every iteration in an HdrHistogram (ping-pongs
 * record half the round trip, like ucx_perftest); stream tests keep {@code window} operations in
 * flight with per-operation completion and end with a fence, a sentinel write and a flush, so they
 * measure data that is remotely visible even when it was spread over several lanes. Every run checks
 * what it did at the target: the sentinel is read back, and the atomic tests' word must have moved
 * by exactly their count (each compare-and-swap expects the value the one before it wrote), so a
 * row is never measured over operations that did not apply.
 */
final class PerfRunner {
    private static final long TIMEOUT_S = 120;

    private final PerfSession s;
    private final int window;
    private final boolean implicit;
    private final boolean chained;
    private final boolean callerProgress;
    private final long jitSettleMs;

    /** How operations complete. */
    enum Completion {
        /** A future per operation, awaited by the test's thread. */
        PER_OP,
        /** Puts, posted ADDs and active messages without futures, completed by a flush every window. */
        IMPLICIT,
        /**
         * One-at-a-time latency tests issue each operation from the previous one's completion, on the
         * thread that completes it (as ucx_perftest's one thread progresses its worker and issues).
         */
        CHAINED
    }

    /**
     * @param completion how operations complete
     * @param jitSettleMs the longest of each wait for the JIT compilers to go quiet within a warm-up
     */
    PerfRunner(PerfSession session, int window, Completion completion, long jitSettleMs) {
        this(session, window, completion, jitSettleMs, false);
    }

    /**
     * @param completion how operations complete
     * @param jitSettleMs the longest of each wait for the JIT compilers to go quiet within a warm-up
     * @param callerProgress whether put_lat's pinger and responder run their worker's I/O themselves
     *     while they poll ({@link dev.fenceline.Worker#progressHere()})
     */
    PerfRunner(PerfSession session, int window, Completion completion, long jitSettleMs, boolean callerProgress) {
        this.callerProgress = callerProgress;
        this.s = session;
        this.window = window;
        this.implicit = completion == Completion.IMPLICIT;
        this.chained = completion == Completion.CHAINED;
        this.jitSettleMs = jitSettleMs;
    }

    /**
     * @param show where the measured run's count goes, now and then (null: nowhere)
     * @return the measured run's result
     */
    PerfResult run(PerfTest test, int size, int warmup, int iterations, LongConsumer show) throws Exception {
        if (size < test.minSize) {
            throw new IllegalArgumentException(test.id() + " needs messages of at least " + test.minSize + " bytes");
        }
        return Progress.measured(warmup, iterations, (n, progress) -> once(test, size, n, progress),
                () -> JitSettle.await(jitSettleMs, s.compilers(), JitSettle.REAL), show);
    }

    private PerfResult once(PerfTest test, int size, int n, Progress progress) throws Exception {
        return switch (test) {
            case PUT_LAT -> putPingPong(size, n, progress);
            case AM_LAT -> amPingPong(size, n, progress);
            case GET_LAT, FADD_LAT, SWAP_LAT, CSWAP_LAT, FLUSH_LAT -> chained ? chained(test, size, n, progress)
                    : oneAtATime(test, size, n, progress);
            case PUT_BW, GET_BW, AM_BW, ADD_MR, FADD_MR, FENCE_RATE -> stream(test, size, n, progress);
        };
    }

    private static Latencies histogram() {
        return new Latencies();
    }

    /**
     * alpha puts into beta's memory, beta's poller sees the sequence number and puts back. With
     * {@link #callerProgress} each poller runs its worker's I/O between its looks at the memory, as
     * ucx_perftest's loop progresses its worker.
     */
    private PerfResult putPingPong(int size, int n, Progress progress) throws Exception {
        int flag = (size - 8) & ~7; // the last aligned word: an acquiring read needs its alignment
        ByteBuffer ping = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
        ByteBuffer pong = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
        ByteBuffer alphaView = s.atAlpha.buffer();
        ByteBuffer betaView = s.atBeta.buffer();
        // Both words, not only alpha's: another test (fetch-adds, the sentinel) may have left beta's
        // ahead, and a responder that found it ahead would answer pings never sent.
        long base = Math.max(PerfSession.word(alphaView, flag), PerfSession.word(betaView, flag));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread responder = new Thread(() -> {
            try (CallerProgress io = callerProgress ? s.beta.progressHere() : null) {
                for (long i = base + 1; i <= base + n && !stop.get(); i++) {
                    long seen;
                    for (int spins = 0; (seen = PerfSession.word(betaView, flag)) < i; spins++) {
                        if (stop.get()) {
                            return;
                        }
                        if (io == null || io.progress() == 0) {
                            PollingWait.idle(spins);
                        }
                    }
                    if (seen != i) { // only the pinger writes this word now, one ping at a time
                        throw new IllegalStateException("put ping-pong: the target's flag word reads " + seen
                                + " where ping " + i + " was awaited: something else wrote it");
                    }
                    PerfSession.word(pong, flag, i);
                    s.toAlpha.put(pong, s.atAlpha.address(), s.alphaKey);
                }
            } catch (RuntimeException e) {
                failure.set(e);
            }
        }, "perf-responder");
        responder.setDaemon(true);
        responder.start();
        Latencies h = histogram();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        long start = System.nanoTime();
        try (CallerProgress io = callerProgress ? s.alpha.progressHere() : null) {
            for (long i = base + 1; i <= base + n; i++) {
                long t0 = System.nanoTime();
                PerfSession.word(ping, flag, i);
                s.toBeta.put(ping, s.atBeta.address(), s.betaKey);
                for (int spins = 0; PerfSession.word(alphaView, flag) < i; spins++) {
                    if (PollingWait.clockDue(spins) && (System.nanoTime() - deadline > 0 || failure.get() != null)) {
                        Throwable failed = failure.get();
                        throw new IllegalStateException(failed != null ? "put ping-pong failed at " + (i - base)
                                + " of " + n : "put ping-pong did not finish within " + TIMEOUT_S + " s: at "
                                + (i - base) + " of " + n, failed);
                    }
                    if (io == null || io.progress() == 0) {
                        PollingWait.idle(spins);
                    }
                }
                h.recordValue((System.nanoTime() - t0) / 2);
                progress.set(i - base);
            }
        } finally {
            stop.set(true);
            responder.join(TimeUnit.SECONDS.toMillis(10));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        await(s.toBeta.flush());
        await(s.toAlpha.flush());
        return PerfResult.latency("put_lat", s.transport, size, h, seconds);
    }

    private PerfResult amPingPong(int size, int n, Progress progress) throws Exception {
        if (implicit) {
            return amPingPongFromHandler(size, n, progress);
        }
        ByteBuffer payload = ByteBuffer.allocateDirect(size);
        ByteBuffer header = ByteBuffer.allocate(0);
        Latencies h = histogram();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        long start = System.nanoTime();
        for (long i = 1; i <= n; i++) {
            long expect = s.pongs.get() + 1;
            long t0 = System.nanoTime();
            CompletableFuture<Void> sent = s.toBeta.sendActiveMessage(PerfSession.PING, header, payload)
                    .toCompletableFuture();
            for (int spins = 0; s.pongs.get() < expect; spins++) {
                if (sent.isCompletedExceptionally()) {
                    sent.get(); // throws ExecutionException with the cause: the row is not measured
                }
                if (PollingWait.clockDue(spins) && System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("AM ping-pong did not finish within " + TIMEOUT_S + " s: at " + i
                            + " of " + n + ": " + sent);
                }
                PollingWait.idle(spins);
            }
            h.recordValue((System.nanoTime() - t0) / 2);
            progress.set(i);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        await(s.toBeta.flush());
        if (s.toAlpha != null) { // in another process, the target flushes its own endpoint
            await(s.toAlpha.flush());
        }
        return PerfResult.latency("am_lat", s.transport, size, h, seconds);
    }

    /**
     * Implicit completion: the pong's handler sends the next ping itself, the way ucx_perftest's
     * loop sends from the thread that progresses its worker. Pings and pongs are implicit active
     * messages (on the fast path where a lane takes them); the flushes at the end report any failure.
     * Only that handler writes the histogram; this thread waits for the last pong.
     */
    private PerfResult amPingPongFromHandler(int size, int n, Progress progress) throws Exception {
        ByteBuffer payload = ByteBuffer.allocateDirect(size);
        ByteBuffer header = ByteBuffer.allocate(0);
        Latencies h = histogram();
        AtomicLong pongs = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch finished = new CountDownLatch(1);
        long[] sentAt = new long[1]; // the handler's own; the first write happens before the first ping
        s.alpha.setActiveMessageHandler(PerfSession.PONG, (hd, p) -> {
            // One clock read between the pong and the next ping, as in ucx_perftest's loop (its
            // update reads the time once there); recorded before the send, so that the next pong,
            // which may come on another thread, finds the histogram written.
            long now = System.nanoTime();
            h.recordValue((now - sentAt[0]) / 2);
            long done = pongs.get() + 1; // only this handler counts, one pong at a time
            pongs.lazySet(done);
            if (done >= n) {
                finished.countDown();
                return;
            }
            try {
                sentAt[0] = now;
                s.toBeta.sendActiveMessageImplicit(PerfSession.PING, header, payload);
            } catch (RuntimeException e) {
                failure.set(e);
                finished.countDown();
            }
        });
        try {
            long start = System.nanoTime();
            long deadline = start + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            sentAt[0] = start;
            s.toBeta.sendActiveMessageImplicit(PerfSession.PING, header, payload);
            while (!finished.await(50, TimeUnit.MILLISECONDS)) {
                progress.set(pongs.get());
                if (System.nanoTime() - deadline > 0) {
                    await(s.toBeta.flush()); // a failed ping fails this flush, naming why
                    throw new IllegalStateException("AM ping-pong did not finish within " + TIMEOUT_S + " s: "
                            + pongs.get() + " of " + n + " pongs");
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (failure.get() != null) {
                throw new IllegalStateException("AM ping-pong failed after " + pongs.get(), failure.get());
            }
            progress.set(n);
            await(s.toBeta.flush());
            if (s.toAlpha != null) { // in another process, the target flushes its own endpoint
                await(s.toAlpha.flush());
            }
            return PerfResult.latency("am_lat", s.transport, size, h, seconds);
        } finally {
            s.alpha.setActiveMessageHandler(PerfSession.PONG, (hd, p) -> s.pongs.incrementAndGet());
        }
    }

    private PerfResult oneAtATime(PerfTest test, int size, int n, Progress progress) throws Exception {
        ByteBuffer buf = ByteBuffer.allocateDirect(size);
        Latencies h = histogram();
        atomicBase = atomicWord();
        long start = System.nanoTime();
        for (long i = 1; i <= n; i++) {
            long t0 = System.nanoTime();
            CompletionStage<?> op = issue(test, buf, i);
            PollingWait.await(op, TIMEOUT_S);
            h.recordValue(System.nanoTime() - t0);
            progress.set(i);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        checkAtomicWord(test, n);
        return PerfResult.latency(test.id(), s.transport, size, h, seconds);
    }

    /** The target's word before an atomic latency test: its operations count up from it. */
    private long atomicBase;

    /** @return the target's word of the atomic tests, by a fetch-add of 0 (in order after what came before) */
    private long atomicWord() throws Exception {
        return s.toBeta.atomicFetch64(AtomicOp.ADD, s.atBeta.address(), s.betaKey, 0).toCompletableFuture()
                .get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    /**
     * After an atomic latency test: its {@code n} operations moved the word by exactly {@code n}
     * (each fetch-add adds 1; each swap writes, and each compare-and-swap expects, the next value).
     */
    private void checkAtomicWord(PerfTest test, int n) throws Exception {
        if (test != PerfTest.FADD_LAT && test != PerfTest.SWAP_LAT && test != PerfTest.CSWAP_LAT) {
            return;
        }
        long now = atomicWord();
        if (now != atomicBase + n) {
            throw new IllegalStateException(test.id() + ": the target's word reads " + now + " after " + n
                    + " operations from " + atomicBase + "; expected " + (atomicBase + n) + ": not all applied");
        }
    }

    /** Issues the {@code i}th operation of a one-at-a-time latency test. */
    private CompletionStage<?> issue(PerfTest test, ByteBuffer buf, long i) {
        Endpoint ep = s.toBeta;
        RemoteKey key = s.betaKey;
        long addr = s.atBeta.address();
        return switch (test) {
            case GET_LAT -> ep.get(buf, addr, key);
            case FADD_LAT -> ep.atomicFetch64(AtomicOp.ADD, addr, key, 1);
            case SWAP_LAT -> ep.atomicFetch64(AtomicOp.SWAP, addr, key, atomicBase + i);
            case CSWAP_LAT -> ep.compareAndSwap64(addr, key, atomicBase + i - 1, atomicBase + i);
            case FLUSH_LAT -> {
                ep.putImplicit(buf, addr, key); // a failed implicit put fails the flush
                yield ep.flush();
            }
            default -> throw new IllegalArgumentException(test.id());
        };
    }

    /**
     * One-at-a-time, each operation issued from the previous one's completion, on the thread that
     * completes it ({@link ChainedLatency}).
     */
    private PerfResult chained(PerfTest test, int size, int n, Progress progress) throws Exception {
        ByteBuffer buf = ByteBuffer.allocateDirect(size);
        ChainedLatency c = new ChainedLatency(i -> issue(test, buf, i), n, histogram());
        atomicBase = atomicWord();
        long start = System.nanoTime();
        c.run(test.id(), TimeUnit.SECONDS.toNanos(TIMEOUT_S), progress);
        double seconds = (System.nanoTime() - start) / 1e9;
        checkAtomicWord(test, n);
        return PerfResult.latency(test.id(), s.transport, size, c.histogram(), seconds);
    }

    /**
     * Puts or posted ADDs without futures: a flush every {@code window} operations completes them
     * (the previous one is awaited first, so two windows are in flight), like JUCX's implicit puts.
     */
    private PerfResult implicitStream(PerfTest test, int size, int n, Progress progress) throws Exception {
        Endpoint ep = s.toBeta;
        RemoteKey key = s.betaKey;
        long addr = s.atBeta.address();
        ByteBuffer buf = ByteBuffer.allocateDirect(size);
        long before = test == PerfTest.ADD_MR ? atomicWord() : 0;
        CompletableFuture<Void> previous = CompletableFuture.completedFuture(null);
        // A count down to the next flush, not i % window: a 64-bit division per operation was a
        // measurable share of an 8-byte put's few nanoseconds.
        int untilFlush = window;
        long start = System.nanoTime();
        for (long i = 1; i <= n; i++) {
            if (test == PerfTest.PUT_BW) {
                ep.putImplicit(buf, addr, key);
            } else if (test == PerfTest.AM_BW) {
                ep.sendActiveMessageImplicit(PerfSession.SINK, null, buf);
            } else {
                ep.atomicPostImplicit64(AtomicOp.ADD, addr, key, 1);
            }
            if (--untilFlush == 0) {
                untilFlush = window;
                previous.get(TIMEOUT_S, TimeUnit.SECONDS);
                previous = ep.flush().toCompletableFuture();
                progress.set(i);
            }
        }
        previous.get(TIMEOUT_S, TimeUnit.SECONDS);
        double seconds = finish(test, n, before, start);
        progress.set(n);
        return PerfResult.throughput(test.id(), s.transport, size, n, seconds);
    }

    /**
     * The end of a stream, inside its time: a fence, then what makes everything before it visible
     * and checks it (like ucx_perftest's sentinel). For the ADD streams a fetch-add of 0, whose value
     * must be the word before plus the count; for the others a sentinel put, flushed and read back.
     *
     * @return the stream's seconds from {@code start}
     */
    private double finish(PerfTest test, int n, long before, long start) throws Exception {
        Endpoint ep = s.toBeta;
        ep.fence();
        if (test == PerfTest.ADD_MR || test == PerfTest.FADD_MR) {
            long now = atomicWord();
            double seconds = (System.nanoTime() - start) / 1e9;
            if (now != before + n) {
                throw new IllegalStateException(test.id() + ": the target's word reads " + now + " after " + n
                        + " adds of 1 from " + before + "; expected " + (before + n) + ": not all applied");
            }
            return seconds;
        }
        ByteBuffer sentinel = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, n);
        await(ep.put(sentinel, s.atBeta.address(), s.betaKey));
        await(ep.flush());
        double seconds = (System.nanoTime() - start) / 1e9;
        ByteBuffer back = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        await(ep.get(back, s.atBeta.address(), s.betaKey));
        if (back.getLong(0) != n) {
            throw new IllegalStateException(test.id() + ": the sentinel " + n + " reads back as " + back.getLong(0)
                    + " after the flush");
        }
        return seconds;
    }

    private PerfResult stream(PerfTest test, int size, int n, Progress progress) throws Exception {
        if (implicit && (test == PerfTest.PUT_BW || test == PerfTest.ADD_MR || test == PerfTest.AM_BW)) {
            return implicitStream(test, size, n, progress);
        }
        Endpoint ep = s.toBeta;
        RemoteKey key = s.betaKey;
        long addr = s.atBeta.address();
        ByteBuffer buf = ByteBuffer.allocateDirect(size);
        ByteBuffer header = ByteBuffer.allocate(0);
        Semaphore inFlight = new Semaphore(window);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        java.util.function.BiConsumer<Object, Throwable> onComplete = (v, e) -> {
            if (e != null) {
                failure.compareAndSet(null, e);
            }
            inFlight.release();
        };
        // A permit this thread holds: an operation done on return gives it back to this thread, with
        // no atomic instruction (ucx_perftest counts its window in plain variables too); only one
        // that completes later takes it along, and its completion releases it to the semaphore.
        boolean holding = false;
        long before = test == PerfTest.ADD_MR || test == PerfTest.FADD_MR ? atomicWord() : 0;
        long start = System.nanoTime();
        for (long i = 1; i <= n; i++) {
            if (!holding && !inFlight.tryAcquire(TIMEOUT_S, TimeUnit.SECONDS)) {
                throw new IllegalStateException(test.id() + " stalled at " + i);
            }
            holding = true;
            CompletionStage<?> op = switch (test) {
                case PUT_BW -> ep.put(buf, addr, key);
                case GET_BW -> ep.get(buf, addr, key);
                case AM_BW -> ep.sendActiveMessage(PerfSession.SINK, header, buf);
                case ADD_MR -> ep.atomicPost64(AtomicOp.ADD, addr, key, 1);
                case FADD_MR -> ep.atomicFetch64(AtomicOp.ADD, addr, key, 1);
                case FENCE_RATE -> {
                    CompletionStage<Void> put = ep.put(buf, addr, key);
                    ep.fence();
                    yield put;
                }
                default -> throw new IllegalArgumentException(test.id());
            };
            // A future done on the calling thread (a fast path) has nothing to wait for: its permit stays
            // here, where whenComplete would make and complete another stage
            CompletableFuture<?> f = op.toCompletableFuture();
            if (!f.isDone() || f.isCompletedExceptionally()) {
                holding = false;
                f.whenComplete(onComplete);
            }
            if ((i & 255) == 0) {
                progress.set(i);
                if (failure.get() != null) {
                    throw new java.util.concurrent.ExecutionException(test.id() + " failed", failure.get());
                }
            }
        }
        if (holding) {
            inFlight.release();
        }
        // Like ucx_perftest: a fence and a sentinel, so everything is visible at the target.
        double seconds;
        try {
            seconds = finish(test, n, before, start);
        } catch (IllegalStateException notAllApplied) {
            inFlight.tryAcquire(window, TIMEOUT_S, TimeUnit.SECONDS); // the failed ones' completions say why
            if (failure.get() != null) {
                throw new java.util.concurrent.ExecutionException(test.id() + " failed", failure.get());
            }
            throw notAllApplied;
        }
        if (!inFlight.tryAcquire(window, TIMEOUT_S, TimeUnit.SECONDS)) {
            throw new IllegalStateException(test.id() + ": operations still in flight after the flush");
        }
        if (failure.get() != null) {
            throw new java.util.concurrent.ExecutionException(test.id() + " failed", failure.get());
        }
        progress.set(n);
        return PerfResult.throughput(test.id(), s.transport, size, n, seconds);
    }

    private static void await(CompletionStage<?> s) throws Exception {
        CompletableFuture<?> f = s.toCompletableFuture();
        f.get(TIMEOUT_S, TimeUnit.SECONDS);
    }
}
