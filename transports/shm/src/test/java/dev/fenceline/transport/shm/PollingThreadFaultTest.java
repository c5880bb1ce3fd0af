package dev.fenceline.transport.shm;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.ApplyFaultCheck;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fault on a worker's polling thread while it applies a put ({@link ApplyFaultCheck}): the runtime
 * stops the agent, and the shm transport fail-stops as when its inbox breaks (its segment marked
 * broken, its heartbeat stopped, its lanes reset, its connects refused, naming the cause).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PollingThreadFaultTest {
    @Test
    void aFaultOnThePollingThreadFailStopsTheTransportAndItsPeersStopWaiting(@TempDir Path dir) throws Exception {
        ApplyFaultCheck.check(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.endpoint.keepalive.timeout = 20s
                """), "polling thread failed", dir);
    }
}
