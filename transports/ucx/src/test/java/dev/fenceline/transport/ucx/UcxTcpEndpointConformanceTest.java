package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.TransportConformanceSuite;
import org.junit.jupiter.api.BeforeAll;

/**
 * The ucx transport over UCT's tcp on loopback with lanes connected endpoint to endpoint, as RDMA's
 * reliable connections must be: the endpoints' addresses go both ways at wireup (over a channel that
 * connects to the peer's interface), and the lane waits for the greeting's answer.
 */
class UcxTcpEndpointConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Override
    protected Config configuration() {
        return ConfigFactory.parseString("fenceline.transports = [ucx]\nfenceline.transport.ucx {\n  tls = [tcp]\n"
                + "  devices = [lo]\n  connect = endpoint\n  tcp-unchecked-writes = accept\n}");
    }
}
