package dev.fenceline.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** The sim transport with a single lane that carries everything (weak fences only). */
class SimOneLaneConformanceTest extends TransportConformanceSuite {
    @Override
    protected Config configuration() {
        return ConfigFactory.parseString(SimConfigs.ONE_LANE + "\nfenceline.fence.mode = weak");
    }
}
