package dev.fenceline.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Threads that each count {@link #EACH} and end, one after another, while a reader sums without
 * pause: the race that folding ended threads' counts must survive. A sum may neither miss an ended
 * thread's counts (neither in its place nor folded) nor count them twice (then once: a drop).
 */
final class EndingThreads {
    static final int GENERATIONS = 200;
    static final int EACH = 1_000;

    private EndingThreads() {
    }

    /**
     * @param generation the body of the thread of each generation (0 to {@link #GENERATIONS} - 1)
     * @param sum the counts' total, read by the reader
     * @param also what else the reader checks each time, or null
     * @return the first thing wrong the reader saw, or null
     */
    static String race(IntFunction<Runnable> generation, LongSupplier sum, Supplier<String> also)
            throws InterruptedException {
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> wrong = new AtomicReference<>();
        AtomicInteger finished = new AtomicInteger();
        Thread reader = new Thread(() -> {
            long last = 0;
            while (!done.get()) {
                long atLeast = (long) finished.get() * EACH; // threads that ended before this sum began
                long s = sum.getAsLong();
                if (s < atLeast) {
                    wrong.compareAndSet(null, "sum " + s + " below the " + atLeast + " counted by ended threads");
                }
                if (s < last || s > (long) GENERATIONS * EACH) {
                    wrong.compareAndSet(null, "sum went from " + last + " to " + s);
                }
                String other = also == null ? null : also.get();
                if (other != null) {
                    wrong.compareAndSet(null, other);
                }
                last = Math.max(last, s);
            }
        });
        reader.start();
        try {
            for (int g = 0; g < GENERATIONS; g++) { // each new thread folds the ended ones' counts
                Thread t = new Thread(generation.apply(g));
                t.start();
                t.join();
                finished.incrementAndGet();
            }
        } finally {
            done.set(true);
            reader.join();
        }
        return wrong.get();
    }
}
