package dev.fenceline.actor;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;

/**
 * Connects one endpoint over several transports at once and joins their lanes in order of
 * preference, so that the lane table holds, say, shm lanes first and tcp lanes after them. The
 * endpoint is up when every transport answered and at least one brought lanes; one that failed is
 * logged and left out.
 */
final class TransportConnects {
    private TransportConnects() {
    }

    /**
     * @param names the transports to connect over, in order of preference (at least one)
     * @param transports the worker's transports by name
     * @param peer the peer
     * @param endpoint the endpoint's name, for the log
     * @param log where a transport that failed is reported
     * @return the lanes of every transport that connected, in order, at most {@link LaneTable#MAX_LANES}
     */
    static CompletionStage<List<LaneConnection>> connect(List<String> names, java.util.Map<String, Transport> transports,
            WorkerAddress peer, String endpoint, Logger log) {
        if (names.size() == 1) {
            return connectOne(transports.get(names.get(0)), peer, names.get(0)); // its own outcome, unchanged
        }
        List<CompletableFuture<List<LaneConnection>>> each = new ArrayList<>();
        for (String n : names) {
            each.add(connectOne(transports.get(n), peer, n).toCompletableFuture());
        }
        return CompletableFuture.allOf(each.stream().map(f -> f.handle((l, e) -> null))
                .toArray(CompletableFuture[]::new)).thenApply(ignored -> join(names, each, peer, endpoint, log));
    }

    private static CompletionStage<List<LaneConnection>> connectOne(Transport t, WorkerAddress peer, String name) {
        try {
            return t.connect(peer.workerId(), peer.transportAddress(name));
        } catch (RuntimeException e) { // a transport that throws instead of failing its stage
            return CompletableFuture.failedFuture(e);
        }
    }

    private static List<LaneConnection> join(List<String> names, List<CompletableFuture<List<LaneConnection>>> each,
            WorkerAddress peer, String endpoint, Logger log) {
        List<LaneConnection> lanes = new ArrayList<>();
        StringBuilder failed = new StringBuilder();
        Throwable first = null;
        for (int i = 0; i < names.size(); i++) {
            try {
                for (LaneConnection c : each.get(i).join()) {
                    if (lanes.size() < LaneTable.MAX_LANES) {
                        lanes.add(c);
                    } else {
                        log.warn("endpoint {}: a {} lane left out: an endpoint has at most {} lanes", endpoint,
                                names.get(i), LaneTable.MAX_LANES);
                        c.close();
                    }
                }
            } catch (CompletionException | java.util.concurrent.CancellationException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                first = first == null ? cause : first;
                failed.append(failed.length() == 0 ? "" : "; ").append(names.get(i)).append(": ")
                        .append(cause.getMessage());
            }
        }
        if (lanes.isEmpty()) {
            throw new EndpointFailedException("endpoint " + endpoint + " reached " + peer + " over none of "
                    + names + ": " + failed, first);
        }
        if (failed.length() > 0) {
            log.info("endpoint {}: connected without {}", endpoint, failed);
        }
        return lanes;
    }
}
