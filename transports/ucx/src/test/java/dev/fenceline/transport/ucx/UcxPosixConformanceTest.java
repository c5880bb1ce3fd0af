package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.TransportConformanceSuite;
import org.junit.jupiter.api.BeforeAll;

/**
 * The ucx transport over UCT's posix shared memory alone between two workers of this JVM: stores and
 * atomics through UCT where the owner's key table admits them, messages for the rest.
 */
class UcxPosixConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Override
    protected Config configuration() {
        return ConfigFactory.parseString("fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [posix]");
    }
}
