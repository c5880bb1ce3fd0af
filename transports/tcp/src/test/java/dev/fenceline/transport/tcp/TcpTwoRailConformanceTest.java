package dev.fenceline.transport.tcp;

import com.typesafe.config.Config;
import dev.fenceline.testkit.TransportConformanceSuite;

/**
 * Two rails over two loopback addresses: operations spread over two connections, so fences are
 * enforced across lanes (strong fences over both connections).
 */
class TcpTwoRailConformanceTest extends TransportConformanceSuite {
    @Override
    protected Config configuration() {
        return TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0");
    }
}
