package dev.fenceline.testkit;

import java.io.PrintStream;
import java.time.Duration;
import java.time.LocalTime;
import java.util.Map;

/**
 * Prints every thread's stack when a long test stops making progress, so that a stall seen once
 * (on a loaded CI machine, say) leaves its evidence in the test's output rather than only a time.
 * The test calls {@link #beat} at each step; if no beat comes for {@code threshold}, the watchdog
 * prints the last step's name and all stacks, once per stall. It never fails the test: a stall that
 * ends is slow, not wrong, and the test's own timeout still applies.
 *
 * <pre>{@code
 * try (StallWatchdog dog = StallWatchdog.start("fault matrix", Duration.ofSeconds(20), System.out)) {
 *     for (Cell c : cells) {
 *         dog.beat(c.toString());
 *         run(c);
 *     }
 * }
 * }</pre>
 */
public final class StallWatchdog implements AutoCloseable {
    private final String name;
    private final long thresholdNanos;
    private final PrintStream out;
    private final Thread thread;
    private volatile long lastBeat = System.nanoTime();
    private volatile String step = "start";

    private StallWatchdog(String name, Duration threshold, PrintStream out) {
        this.name = name;
        this.thresholdNanos = threshold.toNanos();
        this.out = out;
        this.thread = new Thread(this::watch, "stall-watchdog-" + name);
        this.thread.setDaemon(true);
    }

    /**
     * @param name what is watched, for the report
     * @param threshold how long without a beat counts as a stall
     * @param out where the report goes
     * @return a running watchdog
     */
    public static StallWatchdog start(String name, Duration threshold, PrintStream out) {
        StallWatchdog dog = new StallWatchdog(name, threshold, out);
        dog.thread.start();
        return dog;
    }

    /**
     * The test made progress: it starts the step named.
     *
     * @param nextStep the step now running
     */
    public void beat(String nextStep) {
        step = nextStep;
        lastBeat = System.nanoTime();
    }

    private void watch() {
        long reported = -1;
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(Math.max(1, thresholdNanos / 4_000_000));
            } catch (InterruptedException e) {
                return;
            }
            long beat = lastBeat;
            if (System.nanoTime() - beat > thresholdNanos && beat != reported) {
                reported = beat;
                report();
            }
        }
    }

    private void report() {
        StringBuilder b = new StringBuilder();
        b.append("STALL ").append(name).append(" at ").append(LocalTime.now()).append(": no progress for ")
                .append(Duration.ofNanos(System.nanoTime() - lastBeat).toSeconds()).append(" s in step ")
                .append(step).append('\n');
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            b.append("\"").append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement f : e.getValue()) {
                b.append("    at ").append(f).append('\n');
            }
        }
        out.print(b);
        out.flush();
    }

    /** Stops watching. */
    @Override
    public void close() {
        thread.interrupt();
    }
}
