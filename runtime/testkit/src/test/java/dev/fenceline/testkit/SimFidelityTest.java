package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sim transport behaves as a real one would where tests lean on it, on virtual time: what no
 * lane can carry is refused at once with a typed error.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimFidelityTest {
    private static final String ONE_LANE = "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 100us } ]";

    @Test
    void aMessageLargerThanALaneCarriesIsRefusedAtOnceAndTheEndpointServesOn() {
        try (FailoverTest.SimRig r = FailoverTest.SimRig.of(43, ONE_LANE + "\nfenceline.transport.sim.max-fragment"
                + " = 64KiB", 4096)) {
            CompletionException e = assertThrows(CompletionException.class, () -> r.sim().await(
                    r.ep().sendActiveMessage(1, ByteBuffer.allocate(16), ByteBuffer.allocate(64 * 1024))));
            assertInstanceOf(FencelineException.class, e.getCause());
            assertTrue(String.valueOf(e.getCause().getMessage()).contains("65552 bytes exceeds the lane's limit of"
                    + " 65536"), e.getCause().getMessage());
            Endpoint ep = r.ep();
            r.sim().await(ep.put(ByteBuffer.wrap(new byte[] {5}), r.region().address(), r.region().remoteKey()));
            assertEquals(5, r.region().buffer().get(0));
        }
    }
}
