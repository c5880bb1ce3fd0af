package dev.fenceline.spi.support;

import java.util.UUID;

/**
 * The exactly-once scope of a lane ({@link dev.fenceline.spi.LaneConnection#exactlyOnceScope()}) whose
 * target applies through its worker's shared windows ({@link ExactlyOnceWindows}): equal for every
 * lane, of any transport, whose copies reach the same window at the target, so the endpoint may send
 * an uncertain operation again on any of them.
 *
 * @param peer the target worker
 * @param proof what this worker proves to it beyond its worker id, as the target will key the window:
 *     {@link ExactlyOnceWindows#MEMBER} for a peer on this host or one that shares the cluster's
 *     secret; the subject of this worker's TLS certificate for a tcp lane under TLS
 */
public record ExactlyOnceScope(UUID peer, String proof) {
}
