package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** The lane base that tcp and shm share: phases, the payload limit, the GET-buffer guard, batched completions. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AbstractLaneTest {
    /** A lane with nothing of its own. */
    private static final class Lane extends AbstractLane {
        Lane() {
            super("test");
        }

        @Override
        public Set<LaneType> types() {
            return Set.of(LaneType.RMA);
        }

        @Override
        public int maxFragment() {
            return 16;
        }

        @Override
        public void bind(LaneListener listener) {
            listen(listener);
        }

        @Override
        public PostStatus post(TransportOp op) {
            checkedPayload(op);
            return PostStatus.IN_PROGRESS;
        }

        @Override
        public PostStatus flush(long token) {
            return PostStatus.COMPLETED;
        }

        @Override
        public void fence() {
        }


        @Override
        public boolean deduplicates() {
            return true;
        }

        @Override
        public void close() {
            end(Phase.CLOSED);
        }

        @Override
        public void abort(Throwable cause) {
            end(Phase.ABORTED);
        }
    }


    private static void copy(byte[] from, int offset, ByteBuffer sink) {
        sink.duplicate().put(from, offset, sink.remaining());
    }

    @Test
    void idsAreUniqueAndAPayloadOverTheLimitIsRefusedNamingTheKey() {
        Lane a = new Lane();
        assertNotEquals(a.id(), new Lane().id());
        FencelineException e = assertThrows(FencelineException.class, () -> a.post(TransportOp.rma(
                TransportOp.Kind.PUT, 1, 0, null, ByteBuffer.allocate(17))));
        assertTrue(e.getMessage().contains("17 bytes exceeds the lane's limit of 16 (fenceline.transport.test"
                + ".max-fragment"), e.getMessage());
        a.post(TransportOp.rma(TransportOp.Kind.PUT, 2, 0, null, ByteBuffer.allocate(16)));
    }

    @Test
    void noGetAnswerIsCopiedOnceTheEndpointTookTheLaneAway() {
        Lane lane = new Lane();
        ByteBuffer sink = ByteBuffer.allocate(2);
        assertTrue(lane.copyIntoSink(new byte[] {7, 8, 9}, 1, sink, AbstractLaneTest::copy));
        assertEquals(8, sink.get(0));
        lane.abort(new RuntimeException("keepalive"));
        assertEquals(AbstractLane.Phase.ABORTED, lane.phase());
        ByteBuffer late = ByteBuffer.allocate(2);
        assertFalse(lane.copyIntoSink(new byte[] {1, 2}, 0, late, AbstractLaneTest::copy));
        assertEquals(0, late.get(0), "nothing written");
        assertFalse(lane.markFailed(), "a lane given up does not fail again");
        lane.close();
        assertEquals(AbstractLane.Phase.CLOSED, lane.phase());
    }

    @Test
    void completionsAreReportedInBatchesAndNotAfterTheLaneFailed() {
        Lane lane = new Lane();
        BatchRecorder b = new BatchRecorder();
        lane.bind(b);
        for (int i = 0; i < 300; i++) {
            lane.completed(i, i * 10L);
        }
        assertEquals(1, b.batches.size(), "a full batch goes at once");
        lane.reportCompletions();
        assertEquals(2, b.batches.size());
        assertTrue(b.batches.get(1).startsWith("256=2560 "), b.batches.get(1));
        lane.completed(1000, 1);
        assertTrue(lane.markFailed());
        lane.reportCompletions();
        assertEquals(2, b.batches.size(), "a failed lane's late completions are dropped");
        CompletionBatch empty = new CompletionBatch(4);
        empty.report(b);
        assertEquals(0, empty.size());
        assertEquals(2, b.batches.size());
    }
}
