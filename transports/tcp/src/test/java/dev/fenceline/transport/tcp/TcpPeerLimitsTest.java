package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two workers configured with different payload limits still talk: the target announces its
 * limit at wireup and the origin's lanes split transfers to the smaller one, instead of sending
 * frames the target must reject.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpPeerLimitsTest {
    @Test
    void theSmallerPayloadLimitOfBothEndsWins() throws Exception {
        try (Fenceline big = Fenceline.create(ConfigFactory.parseString("""
                fenceline.protocol.fragment-size = 1MiB
                fenceline.transport.tcp.max-fragment = 1MiB
                """).withFallback(TcpConfigs.loopback("127.0.0.1:0")));
                Fenceline small = Fenceline.create(ConfigFactory.parseString(
                        "fenceline.transport.tcp.max-fragment = 64KiB").withFallback(TcpConfigs.loopback(
                                "127.0.0.1:0")))) {
            Worker origin = big.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker target = small.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = target.allocate(2 << 20);
            Endpoint ep = origin.connect(target.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            byte[] data = new byte[(2 << 20) - 3];
            new Random(5).nextBytes(data);
            ep.put(ByteBuffer.wrap(data), region.address(), origin.unpackRemoteKey(region.remoteKey().toBytes()))
                    .toCompletableFuture().get(30, TimeUnit.SECONDS);
            byte[] back = new byte[data.length];
            region.buffer().get(back);
            assertArrayEquals(data, back);
            assertEquals(1, ep.lanes().size());
            assertEquals(0, origin.statistics().failed());
        }
    }
}
