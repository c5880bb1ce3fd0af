package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Coverage-guided fuzzing of the target side with what a connected peer may send, as a request or
 * as a short message: any bytes after a valid connection id are applied within the registered region
 * or refused, never anything else (no exception escapes, no write outside the region), a short message
 * runs its handler only with the bytes it carries, and a message in parts holds no more than its bound.
 */
class UcxTargetFuzzTest {
    private final TargetHarness h = new TargetHarness();
    private int ran;
    private int given;

    UcxTargetFuzzTest() {
        for (int id = 0; id < 4; id++) { // handlers for the ids of one byte's low bits: a well-formed one runs
            h.memory.setHandler(id, (header, payload) -> {
                ran++;
                given = header.remaining() + payload.remaining();
            });
        }
    }

    @FuzzTest(maxExecutions = 1_000_000)
    void request(byte[] input) {
        h.sendRaw(withConn(input));
        checkReplies();
    }

    @FuzzTest(maxExecutions = 200_000)
    void shortMessage(byte[] input) {
        byte[] bytes = withConn(input);
        int before = ran;
        h.sendRawShort(bytes);
        if (ran != before) { // it ran: with every byte after the form's header, and no more than the form carries
            assertTrue(bytes.length - UcxWire.SHORT_HEADER == given && given <= UcxWire.SHORT_DATA_MAX,
                    "ran with " + given + " of " + bytes.length + " bytes");
        }
        checkReplies();
    }

    private static byte[] withConn(byte[] input) {
        byte[] withConn = new byte[8 + input.length];
        ByteBuffer.wrap(withConn).order(ByteOrder.nativeOrder()).putLong(TargetHarness.CONN);
        System.arraycopy(input, 0, withConn, 8, input.length);
        return withConn;
    }

    private void checkReplies() {
        for (byte[] r : h.replies) { // each answer is well formed, on the connection that asked
            ByteBuffer b = ByteBuffer.wrap(r).order(ByteOrder.nativeOrder());
            assertTrue(r.length >= UcxWire.REPLY_HEADER && b.getLong(UcxWire.CONN) == TargetHarness.CONN
                    && b.getInt(UcxWire.REPLY_LENGTH) == r.length - UcxWire.REPLY_HEADER, "a malformed reply");
        }
        h.replies.clear();
        // Messages in parts hold at most one message's bytes per connection, within the bound.
        assertTrue(h.target.assembling() >= 0 && h.target.assembling() <= 1 << 20, "held " + h.target.assembling());
    }
}
