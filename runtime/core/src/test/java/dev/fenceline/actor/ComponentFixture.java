package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.RecordingLane;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** What the endpoint's plain parts need in their tests: lanes, keys, requests, and a record of answers. */
final class ComponentFixture {
    final UUID peerId = UUID.randomUUID();
    final WorkerAddress peer = new WorkerAddress(peerId, "peer", Map.of("recording", new byte[0]));
    final RemoteKey key = new RemoteKey(peerId, 42, 0x10000, 1 << 24, java.util.Map.of());
    final EndpointChannel channel = new EndpointChannel("test", peer);
    /** What lanes answered synchronously: "completed:T=V", "failed:T", "flushed:T". */
    final List<String> answered = new ArrayList<>();
    final LaneSlots.Answers answers = new LaneSlots.Answers() {
        @Override
        public void completed(long token, long value) {
            answered.add("completed:" + token + "=" + value);
        }

        @Override
        public void failed(long token, FencelineException error) {
            answered.add("failed:" + token);
        }

        @Override
        public void flushed(long token) {
            answered.add("flushed:" + token);
        }
    };

    static RecordingLane shortLane(long id) {
        return new RecordingLane(id, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
    }

    static RecordingLane bulkLane(long id) {
        return new RecordingLane(id, Set.of(LaneType.RMA_BW));
    }

    Request put(int bytes, long epoch) {
        return Request.rma(Request.Kind.PUT, epoch, ByteBuffer.allocate(bytes), key.baseAddress(), key);
    }
}
