package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A transport that cannot run in this process (its native library is missing) is not offered: a
 * list that names it runs on the others, auto leaves it out, and a list of nothing else says why.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnavailableTransportTest {
    @Test
    void theOthersServeWhenAListNamesATransportThatCannotRun() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [absent, sim]"))) {
            assertEquals(List.of("sim"), f.transports());
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion r = b.allocate(4096);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ep.put(ByteBuffer.wrap(new byte[] {5}), r.address(), r.remoteKey()).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertEquals(5, r.buffer().get(0));
        }
    }

    @Test
    void autoLeavesItOut() {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = auto"))) {
            assertTrue(!f.transports().contains(AbsentTransportProvider.NAME), f.transports()::toString);
        }
    }

    @Test
    void aListOfNothingElseSaysWhy() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Fenceline.create(ConfigFactory.parseString("fenceline.transports = [absent]")));
        assertTrue(e.getMessage().contains(AbsentTransportProvider.CAUSE), e.getMessage());
    }
}
