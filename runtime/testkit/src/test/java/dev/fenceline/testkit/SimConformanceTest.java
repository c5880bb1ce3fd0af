package dev.fenceline.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** The sim transport, in its default two-lane shape, passes the conformance suite. */
class SimConformanceTest extends TransportConformanceSuite {
    @Override
    protected Config configuration() {
        return ConfigFactory.parseString("fenceline.transports = [sim]");
    }
}
