package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Coverage-guided fuzzing of the target side with what a connected peer may send, as a request or
 * as a short message: any bytes after a valid connection id are applied within the registered region or refused, never anything else (no
 * exception escapes, no write outside the region), and a message in parts holds no more than its
 * bound.
 */
class UcxTargetFuzzTest {
    private final TargetHarness h = new TargetHarness();

    @FuzzTest(maxExecutions = 1_000_000)
    void request(byte[] input) {
        h.sendRaw(withConn(input));
        checkReplies();
    }

    @FuzzTest(maxExecutions = 200_000)
    void shortMessage(byte[] input) {
        h.sendRawShort(withConn(input));
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
