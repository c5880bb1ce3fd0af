package dev.fenceline.testkit.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;

/**
 * Coverage-guided fuzzing of the decoders of bytes another process wrote: {@link RemoteKey#fromBytes}
 * and {@link WorkerAddress#fromBytes}. Every input either decodes (and then re-encodes to a value
 * that decodes equal) or is refused with the typed error; anything else is a finding. The test
 * command runs the inputs under src/test/resources (regression mode); {@code bin/fuzz} fuzzes
 * each target for a million executions.
 */
class PublicDecodersFuzzTest {
    @FuzzTest(maxExecutions = 1_000_000)
    void remoteKey(byte[] input) {
        RemoteKey k;
        try {
            k = RemoteKey.fromBytes(input);
        } catch (RemoteAccessException refused) {
            assertEquals(RemoteAccessException.Reason.MALFORMED_KEY, refused.reason(), refused.getMessage());
            return;
        }
        assertEquals(k, RemoteKey.fromBytes(k.toBytes()));
        k.checkBounds(k.baseAddress(), 0); // a decoded key's own range is well formed
    }

    @FuzzTest(maxExecutions = 1_000_000)
    void workerAddress(byte[] input) {
        WorkerAddress a;
        try {
            a = WorkerAddress.fromBytes(input);
        } catch (FencelineException refused) {
            return;
        }
        assertEquals(a, WorkerAddress.fromBytes(a.toBytes()));
    }
}
