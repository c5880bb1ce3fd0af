package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.testkit.ContractEvents.Completed;
import dev.fenceline.testkit.ContractEvents.Failed;
import dev.fenceline.testkit.ContractEvents.Flushed;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/** A lane the contract suite tests, what it reported, and the operations it posts on it. */
final class ContractLane {
    /** One operation as posted. */
    static final class Posted {
        final long token;
        final TransportOp.Kind kind;
        final PostStatus status;
        final int offset;
        final TransportOp op;
        final ByteBuffer local;

        Posted(long token, TransportOp.Kind kind, PostStatus status, int offset, TransportOp op, ByteBuffer local) {
            this.token = token;
            this.kind = kind;
            this.status = status;
            this.offset = offset;
            this.op = op;
            this.local = local;
        }
    }

    final LaneConnection lane;
    final ContractEvents events = new ContractEvents();
    private final ContractTarget memory;
    private final RemoteKey key;
    private final long originId;
    private final LongSupplier nextSequence;

    /**
     * @param lane the lane
     * @param memory the target's memory
     * @param key its key
     * @param originId the origin endpoint's id the operations carry
     * @param nextSequence the origin's next sequence number (shared by every lane of a suite)
     */
    ContractLane(LaneConnection lane, ContractTarget memory, RemoteKey key, long originId, LongSupplier nextSequence) {
        this.lane = lane;
        this.memory = memory;
        this.key = key;
        this.originId = originId;
        this.nextSequence = nextSequence;
    }

    private TransportOp numbered(TransportOp op) {
        long seq = nextSequence.getAsLong();
        return op.identify(originId, seq, Math.max(0, seq - 64));
    }

    /** @return a put of one byte more than the lane's largest fragment (not posted) */
    TransportOp oversizedPut(long token) {
        ByteBuffer src = ByteBuffer.allocateDirect(lane.maxFragment() + 1);
        return numbered(TransportOp.rma(TransportOp.Kind.PUT, token, memory.base, key, src));
    }

    Posted put(long token, int offset, long value) {
        ByteBuffer src = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, value);
        TransportOp op = numbered(TransportOp.rma(TransportOp.Kind.PUT, token, memory.base + offset, key, src));
        return new Posted(token, TransportOp.Kind.PUT, lane.post(op), offset, op, src);
    }

    Posted get(long token, int offset) {
        ByteBuffer dst = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        TransportOp op = numbered(TransportOp.rma(TransportOp.Kind.GET, token, memory.base + offset, key, dst));
        return new Posted(token, TransportOp.Kind.GET, lane.post(op), offset, op, dst);
    }

    Posted fetchAdd(long token, int offset, long operand) {
        TransportOp op = numbered(TransportOp.atomic(TransportOp.Kind.ATOMIC_FETCH, token, memory.base + offset,
                key, AtomicOp.ADD, 8, operand, 0));
        return new Posted(token, TransportOp.Kind.ATOMIC_FETCH, lane.post(op), offset, op, null);
    }

    /** The fetched value: from the op when done on return, else from its answer. */
    long value(Posted p, Object answer) {
        return p.status == PostStatus.COMPLETED ? p.op.result() : ((Completed) answer).value();
    }

    /**
     * Waits for an answer to every operation posted {@code IN_PROGRESS} and, if not null, the
     * flush's, which must come after them; none may fail or come twice.
     */
    Map<Long, Object> awaitAnswers(Map<Long, Posted> posted, Long flushToken) {
        Map<Long, Object> answers = new HashMap<>();
        for (Posted p : posted.values()) {
            assertTrue(p.status != PostStatus.NO_RESOURCE, "operation " + p.token + " got NO_RESOURCE");
            if (p.status == PostStatus.IN_PROGRESS) {
                Object a = events.answerOf(p.token);
                if (a instanceof Failed f) {
                    fail("operation " + p.token + " failed: " + f.error(), f.error());
                }
                answers.put(p.token, a);
            }
        }
        if (flushToken != null) {
            Object f = events.answerOf(flushToken);
            assertTrue(f instanceof Flushed, "the flush failed: " + f);
            int at = events.indexOf(f);
            for (Object a : answers.values()) {
                assertTrue(events.indexOf(a) < at, "the flush was answered before " + a);
            }
        }
        events.answerCounts().forEach((t, n) -> assertEquals(1, n, "operation " + t + " answered " + n + " times"));
        return answers;
    }
}
