package dev.fenceline.perf;

import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * One row of results.
 *
 * @param test the test id ({@code put_lat}, or a baseline such as {@code stream_bw})
 * @param transport the transport, or {@code raw-netty} for a baseline ({@code raw-netty-spin}: its
 *     event loops spinning)
 * @param size message size in bytes
 * @param iterations measured iterations (after warm-up)
 * @param seconds measured wall time
 * @param bytesPerSecond payload bytes per second
 * @param messagesPerSecond operations per second
 * @param p50Micros median latency (latency tests), else NaN
 * @param p99Micros 99th percentile
 * @param p999Micros 99.9th percentile
 * @param maxMicros worst
 * @param p50LastMicros the median of the last {@value Latencies#LAST} iterations, the statistic
 *     ucx_perftest reports as its percentile (latency tests; a short window, see {@link Latencies}),
 *     else NaN
 * @param warmup iterations run before the measured ones, or -1 where not told
 * @param tcpCongestionControl the TCP congestion control of the row's sockets on this host (the tcp
 *     transport's and the raw Netty baseline's; with {@code --connect} the server's sockets follow its
 *     own host's), or null for a row not over such sockets
 */
record PerfResult(String test, String transport, int size, long iterations, double seconds, double bytesPerSecond,
        double messagesPerSecond, double p50Micros, double p99Micros, double p999Micros, double maxMicros,
        double p50LastMicros, long warmup, String tcpCongestionControl) {

    static PerfResult latency(String test, String transport, int size, Latencies latencies, double seconds) {
        Histogram nanos = latencies.all();
        long n = nanos.getTotalCount();
        return new PerfResult(test, transport, size, n, seconds, n * (double) size / seconds, n / seconds,
                nanos.getValueAtPercentile(50) / 1e3, nanos.getValueAtPercentile(99) / 1e3,
                nanos.getValueAtPercentile(99.9) / 1e3, nanos.getMaxValue() / 1e3, latencies.lastMedian() / 1e3, -1,
                null);
    }

    static PerfResult throughput(String test, String transport, int size, long iterations, double seconds) {
        return new PerfResult(test, transport, size, iterations, seconds, iterations * (double) size / seconds,
                iterations / seconds, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, -1, null);
    }

    /** @return this result, with the warm-up that ran before it */
    PerfResult withWarmup(long iterationsBefore) {
        return new PerfResult(test, transport, size, iterations, seconds, bytesPerSecond, messagesPerSecond, p50Micros,
                p99Micros, p999Micros, maxMicros, p50LastMicros, iterationsBefore, tcpCongestionControl);
    }

    /** @return this result, with the TCP congestion control its sockets ran under */
    PerfResult withTcpCongestionControl(String name) {
        return new PerfResult(test, transport, size, iterations, seconds, bytesPerSecond, messagesPerSecond, p50Micros,
                p99Micros, p999Micros, maxMicros, p50LastMicros, warmup, name);
    }

    boolean isLatency() {
        return !Double.isNaN(p50Micros);
    }

    String text() {
        String head = String.format(Locale.ROOT, "%-11s %-10s %9s %9d", test, transport, PerfCommand.size(size),
                iterations);
        if (isLatency()) {
            return head + String.format(Locale.ROOT, "  latency us: p50 %8.2f  p99 %8.2f  p99.9 %8.2f  max %9.2f"
                    + "  p50 of the last %d %8.2f", p50Micros, p99Micros, p999Micros, maxMicros, Latencies.LAST,
                    p50LastMicros);
        }
        return head + String.format(Locale.ROOT, "  %10.1f MB/s  %12.0f msg/s", bytesPerSecond / 1e6,
                messagesPerSecond);
    }

    String json() {
        StringBuilder b = new StringBuilder();
        b.append("{\"test\":\"").append(test).append("\",\"transport\":\"").append(transport).append("\",\"size\":")
                .append(size).append(",\"iterations\":").append(iterations).append(",\"seconds\":")
                .append(num(seconds)).append(",\"bandwidth_mbps\":").append(num(bytesPerSecond / 1e6))
                .append(",\"rate\":").append(num(messagesPerSecond));
        if (isLatency()) {
            b.append(",\"p50_us\":").append(num(p50Micros)).append(",\"p99_us\":").append(num(p99Micros))
                    .append(",\"p999_us\":").append(num(p999Micros)).append(",\"max_us\":").append(num(maxMicros))
                    .append(",\"p50_last_us\":").append(num(p50LastMicros));
        }
        if (warmup >= 0) {
            b.append(",\"warmup\":").append(warmup);
        }
        if (tcpCongestionControl != null) {
            b.append(",\"tcp_congestion_control\":\"").append(tcpCongestionControl).append('"');
        }
        return b.append('}').toString();
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }
}
