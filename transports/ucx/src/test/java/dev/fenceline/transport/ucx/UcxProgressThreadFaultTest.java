package dev.fenceline.transport.ucx;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.ApplyFaultCheck;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fault on a worker's ucx progress thread while it applies a put ({@link ApplyFaultCheck}): the
 * runtime stops the agent, and the ucx transport fail-stops ({@link UcxFailStop}: its peers are told
 * it leaves, its channels and lanes fail, its connects fail at once, naming the cause).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxProgressThreadFaultTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void aFaultOnTheProgressThreadFailStopsTheTransportAndItsPeersStopWaiting(@TempDir Path dir) throws Exception {
        ApplyFaultCheck.check(ConfigFactory.parseString("""
                fenceline.transports = [ucx]
                fenceline.transport.ucx.tls = [posix]
                fenceline.endpoint.keepalive.timeout = 20s
                """), "progress thread failed", dir);
    }
}
