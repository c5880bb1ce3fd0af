package dev.fenceline.transport.tcp;

import com.typesafe.config.Config;
import dev.fenceline.testkit.TransportConformanceSuite;

/** One rail over loopback: every operation on one ordered connection. */
class TcpConformanceTest extends TransportConformanceSuite {
    @Override
    protected Config configuration() {
        return TcpConfigs.loopback("127.0.0.1:0");
    }
}
