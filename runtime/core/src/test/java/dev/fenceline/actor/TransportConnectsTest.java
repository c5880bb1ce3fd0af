package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.LaneType;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RecordingLane;
import dev.fenceline.spi.Transport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** Connecting one endpoint over several transports: lanes joined in order, failures left out. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransportConnectsTest {
    private final Map<String, Transport> transports = new LinkedHashMap<>();
    private final WorkerAddress peer = new WorkerAddress(UUID.randomUUID(), "peer",
            Map.of("a", new byte[] {1}, "b", new byte[] {2}));

    /** A transport whose connect answers what the test says. */
    private static Transport answering(String name, CompletionStage<List<LaneConnection>> answer) {
        return new Transport() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public byte[] localAddress() {
                return new byte[0];
            }

            @Override
            public CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress) {
                return answer;
            }

            @Override
            public void close() {
            }
        };
    }

    private static List<LaneConnection> lanes(String transport, int n, long firstId) {
        List<LaneConnection> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RecordingLane r = new RecordingLane(firstId + i, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
            r.transport = transport;
            l.add(r);
        }
        return l;
    }

    private List<LaneConnection> connect(List<String> names) throws Exception {
        return TransportConnects.connect(names, transports, peer, "test",
                LoggerFactory.getLogger(TransportConnectsTest.class)).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void lanesOfEveryTransportJoinInTheOrderGiven() throws Exception {
        CompletableFuture<List<LaneConnection>> slow = new CompletableFuture<>();
        transports.put("a", answering("a", slow));
        transports.put("b", answering("b", CompletableFuture.completedFuture(lanes("b", 2, 10))));
        CompletableFuture<List<LaneConnection>> joined = TransportConnects.connect(List.of("a", "b"), transports,
                peer, "test", LoggerFactory.getLogger(TransportConnectsTest.class)).toCompletableFuture();
        assertTrue(!joined.isDone(), "it waits for every transport");
        slow.complete(lanes("a", 1, 1));
        assertEquals(List.of("a", "b", "b"), joined.get(10, TimeUnit.SECONDS).stream()
                .map(LaneConnection::transport).toList());
    }

    @Test
    void aTransportThatCannotReachThePeerIsLeftOutAndOnlyNoneAtAllFails() throws Exception {
        transports.put("a", answering("a", CompletableFuture.failedFuture(new EndpointFailedException("a: down"))));
        transports.put("b", answering("b", CompletableFuture.completedFuture(lanes("b", 1, 10))));
        assertEquals(List.of("b"), connect(List.of("a", "b")).stream().map(LaneConnection::transport).toList());

        transports.put("b", answering("b", CompletableFuture.failedFuture(new EndpointFailedException("b: down"))));
        ExecutionException e = assertThrows(ExecutionException.class, () -> connect(List.of("a", "b")));
        EndpointFailedException f = assertInstanceOf(EndpointFailedException.class, e.getCause());
        assertTrue(f.getMessage().contains("a: a: down") && f.getMessage().contains("b: b: down"), f.getMessage());
    }

    @Test
    void oneTransportKeepsItsOwnOutcomeAndLanesPastTheLimitAreClosed() throws Exception {
        EndpointFailedException own = new EndpointFailedException("a: refused");
        transports.put("a", answering("a", CompletableFuture.failedFuture(own)));
        ExecutionException e = assertThrows(ExecutionException.class, () -> connect(List.of("a")));
        assertSame(own, e.getCause(), "a single transport's failure is passed on as it is");

        List<LaneConnection> many = lanes("a", 60, 1);
        List<LaneConnection> more = lanes("b", 10, 100);
        transports.put("a", answering("a", CompletableFuture.completedFuture(many)));
        transports.put("b", answering("b", CompletableFuture.completedFuture(more)));
        List<LaneConnection> got = connect(List.of("a", "b"));
        assertEquals(LaneTable.MAX_LANES, got.size());
        assertEquals(List.of(), ((RecordingLane) more.get(3)).events, "the 64th lane is kept");
        for (int i = 4; i < more.size(); i++) {
            assertTrue(((RecordingLane) more.get(i)).events.contains("close"), "lane " + i + " of b: over the limit, closed");
        }
    }
}
