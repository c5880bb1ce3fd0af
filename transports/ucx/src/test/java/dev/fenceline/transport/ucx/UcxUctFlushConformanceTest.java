package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.TransportConformanceSuite;
import org.junit.jupiter.api.BeforeAll;

/**
 * The conformance suite over posix and cma with {@code uct-flush = always}: every flush and fence of
 * a lane that handed UCT hardware operations goes through UCT's, as an RDMA lane's do.
 */
class UcxUctFlushConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Override
    protected Config configuration() {
        return ConfigFactory.parseString("fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [posix, cma]\n"
                + "fenceline.transport.ucx.uct-flush = always");
    }
}
