package dev.fenceline.perf;

import java.util.List;
import java.util.function.Consumer;
import me.tongfei.progressbar.ProgressBar;

/**
 * {@code --baseline}: the floor under the transport, measured in the same run as its rows. For shm a
 * copy, a ping-pong of two threads through memory and fetch-adds on a word, each at this machine's
 * speed; for tcp raw Netty over the same loopback, a stream and a ping-pong, its event loops spinning
 * where the run's do.
 */
final class Baselines {
    /** A progress bar for a run, or null where none is shown. */
    interface Bars {
        ProgressBar bar(String task, long max);
    }

    private Baselines() {
    }

    /**
     * @param transport the run's transport: shm's floors for shm, raw Netty's for any other
     * @param congestionControl the TCP congestion control of the raw sockets, empty for the kernel's default
     * @param busyPoll whether raw Netty's event loops spin (the run's {@code --busy-poll} or
     *     {@code --caller-progress})
     * @param sizes the run's message sizes
     * @param counts the run's counts (the stream's for the copy and the stream, put_lat's for the ping-pongs)
     * @param settle the wait for the compilers between a warm-up's passes
     * @param bars where a run shows its progress
     * @param row takes each row as it is measured
     */
    static void measure(String transport, String congestionControl, boolean busyPoll, List<Integer> sizes,
            PerfCounts counts, Progress.Settle settle, Bars bars, Consumer<PerfResult> row) throws Exception {
        if (transport.equals("shm")) {
            for (int size : sizes) {
                int n = counts.measured(PerfTest.PUT_BW, size);
                int w = counts.warmups(PerfTest.PUT_BW, size);
                row.accept(Progress.measured(w, n, (k, p) -> Memcpy.measure(size, k), settle, null).withWarmup(w));
                int m = counts.measured(PerfTest.PUT_LAT, size);
                int v = counts.warmups(PerfTest.PUT_LAT, size);
                row.accept(Progress.measured(v, m, (k, p) -> MemoryFloors.pingPong(size, k), settle, null)
                        .withWarmup(v));
            }
            int m = counts.measured(PerfTest.FADD_MR, 8);
            int w = counts.warmups(PerfTest.FADD_MR, 8);
            row.accept(Progress.measured(w, m, (k, p) -> MemoryFloors.fetchAdd(k), settle, null).withWarmup(w));
            return;
        }
        try (RawNettyBaseline raw = new RawNettyBaseline(congestionControl, busyPoll)) {
            for (int size : sizes) {
                row.accept(shown(bars, "raw stream " + PerfCommand.size(size), counts.warmups(PerfTest.PUT_BW, size),
                        counts.measured(PerfTest.PUT_BW, size), (k, p) -> raw.stream(size, k, p), settle));
                row.accept(shown(bars, "raw ping-pong " + PerfCommand.size(size),
                        counts.warmups(PerfTest.PUT_LAT, size), counts.measured(PerfTest.PUT_LAT, size),
                        (k, p) -> raw.pingPong(size, k, p), settle));
            }
        }
    }

    /** @return a run measured under its progress bar, handed on once the bar is gone */
    private static PerfResult shown(Bars bars, String task, int warmup, int n, Progress.Pass<PerfResult> pass,
            Progress.Settle settle) throws Exception {
        try (ProgressBar bar = bars.bar(task, n)) {
            return Progress.measured(warmup, n, pass, settle, PerfCommand.progress(bar)).withWarmup(warmup);
        }
    }
}
