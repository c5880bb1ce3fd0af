package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;

/**
 * Coverage-guided fuzzing of the wireup messages, as a peer sends them: every input decodes to a
 * message that encodes back to the same bytes, or is refused with the typed error.
 */
class UcxWireupFuzzTest {
    @FuzzTest(maxExecutions = 1_000_000)
    void message(byte[] input) {
        UcxWireup.Message m;
        try {
            m = UcxWireup.decode(ByteBuffer.wrap(input));
        } catch (FencelineException refused) {
            return;
        }
        assertArrayEquals(input, UcxWireup.encode(m), "decodes and encodes back the same");
    }
}
