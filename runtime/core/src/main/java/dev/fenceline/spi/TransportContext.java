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
 */
public record TransportContext(UUID workerId, String workerName, Config config, RemoteAccessTarget target) {
}
