package dev.fenceline.spi;

import com.typesafe.config.Config;
import java.util.UUID;

/**
 * What a transport instance gets from its worker.
 *
 * @param workerId the worker's identity
 * @param workerName the worker's name
 * @param config the transport's own section, {@code fenceline.transport.<name>}
 * @param target the worker's registered memory and active-message handlers, for operations that
 *     arrive from peers
 * @param windows the worker's exactly-once windows, shared by all its transports: a transport that
 *     applies operations in software applies them through these, so that a copy re-sent over another
 *     transport's lane is recognized
 * @param livenessTimeout how long a peer may stop answering before a transport that watches its
 *     lanes' peers itself ({@link LaneConnection#watchesLiveness()}) fails those lanes: the endpoint
 *     keepalive's timeout, or zero when keepalive is off (then such a transport fails lanes only for
 *     a peer that is gone)
 */
public record TransportContext(UUID workerId, String workerName, Config config, RemoteAccessTarget target,
        dev.fenceline.spi.support.ExactlyOnceWindows windows, java.time.Duration livenessTimeout) {
    /**
     * A context without liveness watching (keepalive off).
     *
     * @param workerId the worker's identity
     * @param workerName the worker's name
     * @param config the transport's own section
     * @param target the worker's memory and handlers
     * @param windows the worker's exactly-once windows
     */
    public TransportContext(UUID workerId, String workerName, Config config, RemoteAccessTarget target,
            dev.fenceline.spi.support.ExactlyOnceWindows windows) {
        this(workerId, workerName, config, target, windows, java.time.Duration.ZERO);
    }

    /**
     * A context whose transport has windows of its own, with the defaults of {@code fenceline.exactly-once}
     * (for a transport driven without a runtime, as in its own tests).
     *
     * @param workerId the worker's identity
     * @param workerName the worker's name
     * @param config the transport's own section
     * @param target the worker's memory and handlers
     */
    public TransportContext(UUID workerId, String workerName, Config config, RemoteAccessTarget target) {
        this(workerId, workerName, config, target, new dev.fenceline.spi.support.ExactlyOnceWindows("worker '"
                + workerName + "'", 1 << 20, java.time.Duration.ofMinutes(10), 1L << 21, 1L << 24, System::nanoTime));
    }
}
