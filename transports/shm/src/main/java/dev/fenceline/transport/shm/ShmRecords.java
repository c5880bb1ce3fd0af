package dev.fenceline.transport.shm;

import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.Host;
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.agrona.concurrent.AtomicBuffer;

/**
 * Writes a lane's request records, and a dial's CONNECT ({@link ShmWire}'s layouts), into a record
 * claimed in the peer's inbox ring, at {@code at} in the ring's buffer. Only the bytes: claiming,
 * committing, and what the lane remembers about each message stay with {@link ShmLane} (the dial's
 * with the transport), which must abort the claim if a write throws (a claimed record left behind
 * would block the peer's inbox). Apart so the wire layout is in one place, beside the lane's
 * bookkeeping rather than inside it.
 */
final class ShmRecords {
    private ShmRecords() {
    }

    /** Writes what every request starts with: {@code conn, token, origin, seq, low}. */
    static void prefix(AtomicBuffer b, int at, long conn, TransportOp op) {
        b.putLong(at + ShmWire.CONN, conn);
        b.putLong(at + ShmWire.TOKEN, op.token());
        b.putLong(at + ShmWire.ORIGIN, op.originId());
        b.putLong(at + ShmWire.SEQ, op.sequence());
        b.putLong(at + ShmWire.LOW, op.lowWater());
    }

    /**
     * Writes the rest of {@code op}'s record, after its {@link #prefix}.
     *
     * @param payload the op's payload in bytes (as checked against the lane's limit)
     */
    static void body(AtomicBuffer b, int at, TransportOp op, int payload) {
        long key = op.key() == null ? 0 : op.key().keyId();
        switch (op.kind()) {
            case PUT -> {
                b.putLong(at + ShmWire.BODY, key);
                b.putLong(at + ShmWire.BODY + 8, op.remoteAddress());
                b.putBytes(at + ShmWire.RMA_DATA, op.local(), op.local().position(), payload);
            }
            case GET -> {
                b.putLong(at + ShmWire.BODY, key);
                b.putLong(at + ShmWire.BODY + 8, op.remoteAddress());
                b.putInt(at + ShmWire.GET_LENGTH, payload);
            }
            case AM -> activeMessage(b, at, op.amId(), op.header(), op.header().remaining(), op.local());
            default -> {
                b.putLong(at + ShmWire.BODY, key);
                b.putLong(at + ShmWire.BODY + 8, op.remoteAddress());
                byte kind = switch (op.kind()) {
                    case ATOMIC_POST -> ShmWire.KIND_POST;
                    case ATOMIC_FETCH -> ShmWire.KIND_FETCH;
                    default -> ShmWire.KIND_CSWAP;
                };
                b.putByte(at + ShmWire.ATOMIC_KIND, kind);
                b.putByte(at + ShmWire.ATOMIC_KIND + 1,
                        kind == ShmWire.KIND_CSWAP ? 0 : WireCodes.atomicCode(op.atomicOp()));
                b.putByte(at + ShmWire.ATOMIC_KIND + 2, (byte) op.width());
                b.putLong(at + ShmWire.ATOMIC_OPERAND, op.operand());
                b.putLong(at + ShmWire.ATOMIC_COMPARE, op.compare());
            }
        }
    }

    /**
     * Writes a direct active message's record, all but its token ({@link #token}): it has no
     * exactly-once number, and is numbered only once nothing can stop it.
     *
     * @param headerBytes {@code header}'s remaining bytes, as the record was claimed for
     */
    static void directActiveMessage(AtomicBuffer b, int at, long conn, long origin, int id, ByteBuffer header,
            int headerBytes, ByteBuffer payload) {
        b.putLong(at + ShmWire.CONN, conn);
        b.putLong(at + ShmWire.ORIGIN, origin);
        b.putLong(at + ShmWire.SEQ, -1);
        b.putLong(at + ShmWire.LOW, -1);
        activeMessage(b, at, id, header, headerBytes, payload);
    }

    /** Writes a request's token. */
    static void token(AtomicBuffer b, int at, long token) {
        b.putLong(at + ShmWire.TOKEN, token);
    }

    /** @return the length of a CONNECT record naming a control segment of {@code name}'s bytes */
    static int connectLength(byte[] name) {
        return 48 + name.length;
    }

    /**
     * Writes a CONNECT record: the connection, this worker and process, the gate the origin opened
     * for it, and the origin's control segment by name.
     */
    static void connect(AtomicBuffer b, int at, long conn, UUID worker, int gate, byte[] name) {
        b.putLong(at, conn);
        b.putLong(at + 8, worker.getMostSignificantBits());
        b.putLong(at + 16, worker.getLeastSignificantBits());
        b.putLong(at + 24, Host.pid());
        b.putLong(at + 32, Host.startTime());
        b.putInt(at + 40, gate);
        b.putInt(at + 44, name.length);
        b.putBytes(at + 48, name);
    }

    /** Writes a FLUSH record. */
    static void flush(AtomicBuffer b, int at, long conn, long token) {
        b.putLong(at + ShmWire.CONN, conn);
        b.putLong(at + ShmWire.TOKEN, token);
    }

    /** An active message's body, the same through the actor or direct: id, header length, header, payload. */
    private static void activeMessage(AtomicBuffer b, int at, int id, ByteBuffer header, int h, ByteBuffer payload) {
        b.putInt(at + ShmWire.AM_ID, id);
        b.putInt(at + ShmWire.AM_HEADER_LENGTH, h);
        b.putBytes(at + ShmWire.AM_DATA, header, header.position(), h);
        b.putBytes(at + ShmWire.AM_DATA + h, payload, payload.position(), payload.remaining());
    }
}
