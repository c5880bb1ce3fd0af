package dev.fenceline.testkit;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongUnaryOperator;

/**
 * One cell of a fault matrix on a real transport: calls of one kind around a fence on an endpoint,
 * a fault the caller injects at a chosen point, then the checks of {@link HistoryChecker} (every
 * call completed with a result or a typed error, flushes covered what came before them, outcomes
 * truthful, fences held and every write and atomic applied exactly once where memory can be read)
 * and, for active messages, that each ran at most once and exactly once where it succeeded.
 *
 * <p>The program: three calls (on words 0, 1, 2), a short pause, the fault if it comes before the
 * fence, a fence (two for {@link Call#FENCE}, whose cell fences puts), a call on word 0, a pause,
 * the fault if it comes while fencing, a flush, the fault if it comes after the flush, and a last
 * call on word 1. Words are 64 bytes apart from {@code base}; counters for atomics start at
 * {@code base + 512}. Active messages carry an 8-byte tag in their header, unique per cell.
 *
 * <pre>{@code
 * FaultCell cell = new FaultCell(endpoint, key, base, 31);
 * cell.run(FaultCell.Call.PUT, FaultCell.Point.BEFORE_FENCE, relay::cut);
 * String bad = cell.check(address -> memory.getLong(...), tag -> handlerRuns.get(tag), -1);
 * }</pre>
 */
public final class FaultCell {
    /** What kind of call the cell makes. */
    public enum Call {
        /** 8-byte puts. */
        PUT,
        /** 8-byte gets. */
        GET,
        /** Posted ADDs. */
        ADD,
        /** Fetching ADDs. */
        FETCH_ADD,
        /** Active messages. */
        MESSAGE,
        /** Flushes. */
        FLUSH,
        /** Puts with a fence upon the fence. */
        FENCE
    }

    /** Where the fault comes. */
    public enum Point {
        /** After the first three calls, before the fence. */
        BEFORE_FENCE,
        /** After the fence and the call behind it, while it is in flight. */
        WHILE_FENCING,
        /** After the flush, before the last call. */
        AFTER_FLUSH
    }

    /** Where atomics' counters start, from {@code base}. */
    public static final int COUNTERS = 512;
    private static long nextTag = 1;

    private final Endpoint raw;
    private final Endpoint ep;
    private final History history = new History();
    private final RemoteKey key;
    private final long base;
    private final int messageId;
    private final List<CompletableFuture<?>> calls = new ArrayList<>();
    private final List<Long> tags = new ArrayList<>();
    private final List<CompletableFuture<?>> messages = new ArrayList<>();
    private long unknown;
    private CompletableFuture<?> drain;

    /**
     * @param endpoint a fresh endpoint to the target
     * @param key the target region's key, unpacked at the origin
     * @param base the first address of the cell's memory (at least 544 bytes, zero)
     * @param messageId the active-message id whose handler at the target counts messages
     */
    public FaultCell(Endpoint endpoint, RemoteKey key, long base, int messageId) {
        this.raw = endpoint;
        this.ep = history.record(endpoint);
        this.key = key;
        this.base = base;
        this.messageId = messageId;
    }

    /**
     * @param header the header an active message of this program arrived with, at the target
     * @return the tag it carries: its first 8 bytes, native order
     */
    public static long tagOf(ByteBuffer header) {
        return header.order(ByteOrder.nativeOrder()).getLong(0);
    }

    /**
     * Runs the program and waits (up to 30 s in all) for every call's outcome.
     *
     * @param call the kind of call
     * @param point where {@code fault} runs
     * @param fault the fault, injected on the calling thread
     * @return this
     * @throws InterruptedException if interrupted while pausing or waiting
     */
    public FaultCell run(Call call, Point point, Runnable fault) throws InterruptedException {
        return run(call, point, fault, Duration.ofSeconds(30));
    }

    /**
     * Runs the program and waits up to {@code patience} in all for the calls' outcomes. A call may
     * rightly wait for as long as its fault lasts (an atomic a stopped peer had taken when it stopped
     * is answered when it runs again, and work fenced behind it waits for that answer): such a cell
     * gives its calls a short patience, ends the fault, then {@link #settle}s them.
     *
     * @param call the kind of call
     * @param point where {@code fault} runs
     * @param fault the fault, injected on the calling thread
     * @param patience how long to wait for the outcomes before returning
     * @return this
     * @throws InterruptedException if interrupted while pausing or waiting
     */
    public FaultCell run(Call call, Point point, Runnable fault, Duration patience) throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            issue(call, i);
        }
        Thread.sleep(2); // some copies arrive, some answers are still on their way
        if (point == Point.BEFORE_FENCE) {
            fault.run();
        }
        ep.fence();
        if (call == Call.FENCE) {
            ep.fence();
        }
        issue(call, 0);
        Thread.sleep(2);
        if (point == Point.WHILE_FENCING) {
            fault.run();
        }
        calls.add(ep.flush().toCompletableFuture());
        if (point == Point.AFTER_FLUSH) {
            fault.run();
        }
        issue(call, 1);
        drain = raw.flush().toCompletableFuture(); // unrecorded: it covers every call before it
        settle(patience);
        return this;
    }

    /**
     * Waits up to {@code within} in all for the outcomes of the calls still open.
     *
     * @param within how long
     * @return this
     * @throws InterruptedException if interrupted while waiting
     */
    public FaultCell settle(Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        List<CompletableFuture<?>> all = new ArrayList<>(calls);
        if (drain != null) {
            all.add(drain);
        }
        for (CompletableFuture<?> c : all) {
            try {
                c.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException failedOrStuck) {
                // checked through the history (a call still open at the check fails the completion check)
            }
        }
        unknown = 0;
        for (CompletableFuture<?> c : calls) {
            if (c.isCompletedExceptionally()) {
                try {
                    c.join();
                } catch (CompletionException e) {
                    unknown += e.getCause() instanceof OutcomeUnknownException ? 1 : 0;
                }
            }
        }
        return this;
    }

    /** @return the addresses whose final values {@link #check} reads: the cell's four words and four counters */
    public long[] addresses() {
        long[] a = new long[8];
        for (int w = 0; w < 4; w++) {
            a[w] = base + 64L * w;
            a[4 + w] = base + COUNTERS + 8L * w;
        }
        return a;
    }

    /**
     * @param memory the target's final value at an address, or null if the target is gone (then only
     *     completion, flushes and outcomes are checked)
     * @param timesRun how often the message with a tag ran, or null if only {@code totalRan} is known
     * @param totalRan how many of the cell's messages ran in all (used when {@code timesRun} is null)
     * @return null if every check held, else what did not
     */
    public String check(LongUnaryOperator memory, LongUnaryOperator timesRun, long totalRan) {
        StringBuilder bad = new StringBuilder();
        HistoryChecker c = HistoryChecker.of(history);
        try {
            c.assertEveryRequestCompleted().assertOutcomesTruthful().assertFlushesCovered();
            if (memory != null) {
                c.assertFencesHeld().assertExactlyOnce(memory);
            }
        } catch (AssertionError e) {
            bad.append(e.getMessage()).append("; ");
        }
        long ok = messages.stream().filter(m -> m.isDone() && !m.isCompletedExceptionally()).count();
        if (timesRun != null) {
            for (int m = 0; m < tags.size(); m++) {
                long times = timesRun.applyAsLong(tags.get(m));
                boolean succeeded = messages.get(m).isDone() && !messages.get(m).isCompletedExceptionally();
                if (times > 1 || (succeeded && times != 1)) {
                    bad.append("message ").append(m).append(" ran ").append(times).append(" times, outcome ")
                            .append(succeeded ? "success" : "failure").append("; ");
                }
            }
        } else if (memory != null && (totalRan < ok || totalRan > messages.size())) {
            bad.append(totalRan).append(" of ").append(messages.size()).append(" messages ran, ").append(ok)
                    .append(" succeeded; ");
        }
        return bad.length() == 0 ? null : bad.toString();
    }

    /** @return calls that failed with {@link OutcomeUnknownException} */
    public long unknown() {
        return unknown;
    }

    private static synchronized long tag() {
        return nextTag++;
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    private int step;

    private void issue(Call call, int w) {
        int word = w & 3;
        step++;
        switch (call == Call.FENCE ? Call.PUT : call) {
            case PUT -> calls.add(ep.put(word(step), base + 64L * word, key).toCompletableFuture());
            case GET -> calls.add(ep.get(ByteBuffer.allocateDirect(8), base + 64L * word, key).toCompletableFuture());
            case ADD -> calls.add(ep.atomicPost64(AtomicOp.ADD, base + COUNTERS + 8L * word, key, 1)
                    .toCompletableFuture());
            case FETCH_ADD -> calls.add(ep.atomicFetch64(AtomicOp.ADD, base + COUNTERS + 8L * word, key, 1)
                    .toCompletableFuture());
            case MESSAGE -> {
                long tag = tag();
                CompletableFuture<?> m = ep.sendActiveMessage(messageId, word(tag), ByteBuffer.allocate(1))
                        .toCompletableFuture();
                tags.add(tag);
                messages.add(m);
                calls.add(m);
            }
            case FLUSH -> calls.add(ep.flush().toCompletableFuture());
            default -> throw new IllegalArgumentException(call.toString());
        }
    }

}
