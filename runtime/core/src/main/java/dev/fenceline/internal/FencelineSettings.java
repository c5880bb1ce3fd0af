package dev.fenceline.internal;

import com.typesafe.config.Config;
import dev.fenceline.ConfigurationException;
import dev.fenceline.spi.support.ConfigReader;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Every {@code fenceline.*} key of the runtime, read and validated once. Transports read their own
 * section, {@code fenceline.transport.<name>}. Defaults live only in {@code reference.conf}.
 *
 * @param transports enabled transports, in order of preference
 * @param fenceMode the resolved fence mode
 * @param errorMode what a lane failure does
 * @param connectTimeout how long connecting an endpoint may take
 * @param submitBatch how many submitted operations an endpoint takes per mailbox turn
 * @param keepaliveInterval idle time after which a lane is probed; zero disables keepalive
 * @param keepaliveTimeout how long a probe may stay unanswered before the lane fails
 * @param shortMax RMA up to this size prefers an RMA lane
 * @param bandwidthThreshold RMA from this size prefers an RMA_BW lane
 * @param fragmentSize the largest single transport operation
 * @param keysRead every key read, for the completeness test
 */
public record FencelineSettings(List<String> transports, FenceMode fenceMode, ErrorMode errorMode,
        Duration connectTimeout, int submitBatch, Duration keepaliveInterval, Duration keepaliveTimeout, long shortMax, long bandwidthThreshold, int fragmentSize,
        Set<String> keysRead) {

    /**
     * @param root the whole configuration (with reference.conf)
     * @return validated settings
     * @throws ConfigurationException naming the first bad key and value
     */
    public static FencelineSettings fromConfig(Config root) {
        ConfigReader r = new ConfigReader(root, "fenceline");
        List<String> transports = r.stringList("transports");
        if (transports.isEmpty()) {
            throw r.invalid("transports", "[]", "at least one transport name");
        }
        if (new HashSet<>(transports).size() != transports.size()) {
            throw r.invalid("transports", transports.toString(), "distinct transport names");
        }
        FenceMode fence = switch (r.oneOf("fence.mode", List.of("auto", "weak", "strong", "endpoint"))) {
            case "weak" -> FenceMode.WEAK;
            case "strong" -> FenceMode.STRONG;
            default -> FenceMode.ENDPOINT; // auto resolves to endpoint, UCX's ep_based
        };
        ErrorMode error = ErrorMode.valueOf(
                r.oneOf("endpoint.error-mode", List.of("none", "peer", "failover")).toUpperCase(java.util.Locale.ROOT));
        Duration connectTimeout = r.durationIn("endpoint.connect-timeout", Duration.ofMillis(1), Duration.ofHours(1));
        int submitBatch = r.intIn("endpoint.submit-batch", 1, 1 << 16);
        Duration keepalive = r.durationIn("endpoint.keepalive.interval", Duration.ZERO, Duration.ofHours(1));
        if (!keepalive.isZero() && keepalive.toMillis() < 1) {
            throw r.invalid("endpoint.keepalive.interval", keepalive.toString(), "0 (off) or at least 1ms");
        }
        Duration keepaliveTimeout = r.durationIn("endpoint.keepalive.timeout", Duration.ofMillis(1),
                Duration.ofHours(1));
        long shortMax = r.bytesIn("protocol.short-max", 0, 1 << 20);
        long bw = r.bytesIn("protocol.bandwidth-threshold", 1, 1L << 30);
        if (bw <= shortMax) {
            throw r.invalid("protocol.bandwidth-threshold", Long.toString(bw),
                    "more than fenceline.protocol.short-max (" + shortMax + ")");
        }
        int fragment = (int) r.bytesIn("protocol.fragment-size", 64, 1 << 30);
        r.oneOf("unknown-keys", List.of("error", "warn", "ignore")); // ConfigKeys acts on it
        return new FencelineSettings(List.copyOf(transports), fence, error, connectTimeout, submitBatch, keepalive,
                keepaliveTimeout, shortMax, bw, fragment, r.keysRead());
    }
}
