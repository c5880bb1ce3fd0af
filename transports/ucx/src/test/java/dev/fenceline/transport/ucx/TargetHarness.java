package dev.fenceline.transport.ucx;

import dev.fenceline.MemoryRegion;
import dev.fenceline.internal.RegistrationTable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A {@link UcxTarget} over a real registration table, its replies captured instead of sent, and
 * requests written as a peer's lane would (or as a hostile one might): for the target's own tests.
 */
final class TargetHarness {
    static final long CONN = 0x1234_5678_9abcL;
    final RegistrationTable memory = new RegistrationTable(UUID.randomUUID(), "b");
    final MemoryRegion region = memory.register(ByteBuffer.allocateDirect(4096));
    final List<byte[]> replies = new ArrayList<>();
    final dev.fenceline.spi.support.ExactlyOnceWindows windows = new dev.fenceline.spi.support.ExactlyOnceWindows(
            "worker 'b'", 1024, java.time.Duration.ofMinutes(1), 1 << 20, 1 << 22, System::nanoTime);
    final UcxTarget target = new UcxTarget("b", memory, windows, 8192, 1 << 20, 10_000_000_000L, 3_600_000_000_000L,
            (channel, b, n) -> {
                byte[] copy = new byte[n];
                b.getBytes(0, copy);
                replies.add(copy);
            });
    final UcxPeer peer = new UcxPeer(UUID.randomUUID(), new UcxAddress("h", 1, 1, List.of(), null));
    private final UnsafeBuffer request = new UnsafeBuffer(ByteBuffer.allocateDirect(16384));

    TargetHarness() {
        target.open(CONN, new UcxIncoming(peer, null, Integer.MAX_VALUE));
        target.answers().holdFromNowOn(); // as an agent on a thread of its own does
    }

    /** A well-formed request's header; the caller adds data and sends {@code length} bytes. */
    UnsafeBuffer header(byte kind, long token, long seq) {
        request.setMemory(0, UcxWire.REQUEST_HEADER, (byte) 0);
        request.putLong(UcxWire.CONN, CONN);
        request.putLong(UcxWire.TOKEN, token);
        request.putLong(UcxWire.ORIGIN, 99);
        request.putLong(UcxWire.SEQ, seq);
        request.putLong(UcxWire.LOW, 0);
        request.putByte(UcxWire.KIND, kind);
        request.putLong(UcxWire.KEY, region.remoteKey().keyId());
        request.putLong(UcxWire.ADDRESS, region.address());
        return request;
    }

    void send(int length) {
        target.onRequest(request, 0, length);
    }

    /** Sends a well-formed SHORT MESSAGE from origin endpoint 99. */
    void sendShort(long token, int id, byte[] header, byte[] payload, boolean mayWait) {
        request.putLong(UcxWire.CONN, CONN);
        request.putLong(UcxWire.TOKEN, token);
        request.putLong(UcxWire.ORIGIN, 99);
        request.putShort(UcxWire.SHORT_ID, (short) id);
        request.putByte(UcxWire.SHORT_BITS, (byte) (header.length | (mayWait ? UcxWire.SHORT_MAY_WAIT : 0)));
        request.putBytes(UcxWire.SHORT_HEADER, header);
        request.putBytes(UcxWire.SHORT_HEADER + header.length, payload);
        target.onShortMessage(request, 0, UcxWire.SHORT_HEADER + header.length + payload.length);
    }

    /** Sends arbitrary bytes as a SHORT MESSAGE. */
    void sendRawShort(byte[] bytes) {
        UnsafeBuffer b = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, bytes.length)));
        b.putBytes(0, bytes);
        target.onShortMessage(b, 0, bytes.length);
    }

    /** Sends arbitrary bytes as a request. */
    void sendRaw(byte[] bytes) {
        UnsafeBuffer b = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, bytes.length)));
        b.putBytes(0, bytes);
        target.onRequest(b, 0, bytes.length);
    }

    /** @return the last reply's type */
    int lastType() {
        return replies.get(replies.size() - 1)[UcxWire.REPLY_TYPE];
    }

    /** @return the last reply's value */
    long lastValue() {
        return ByteBuffer.wrap(replies.get(replies.size() - 1)).order(ByteOrder.nativeOrder()).getLong(UcxWire.REPLY_VALUE);
    }

    /** @return the last reply's text (a NACK's) */
    String lastText() {
        byte[] r = replies.get(replies.size() - 1);
        return new String(r, UcxWire.REPLY_HEADER, r.length - UcxWire.REPLY_HEADER, java.nio.charset.StandardCharsets.UTF_8);
    }
}
