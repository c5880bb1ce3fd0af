package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.TransportConformanceSuite;
import org.junit.jupiter.api.BeforeAll;

/** The ucx transport over UCT's tcp on loopback: every operation as a message the target applies, between two workers of this JVM. */
class UcxTcpConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Override
    protected Config configuration() {
        return ConfigFactory.parseString("fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [tcp]\nfenceline.transport.ucx.devices = [lo]\n"
                + "fenceline.transport.ucx.tcp-unchecked-writes = accept");
    }
}
