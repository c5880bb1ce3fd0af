package dev.fenceline.transport.shm;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.TransportConformanceSuite;

/** The shm transport between two workers of this JVM: direct access to shared segments. */
class ShmConformanceTest extends TransportConformanceSuite {
    @Override
    protected Config configuration() {
        return ConfigFactory.parseString("fenceline.transports = [shm]");
    }
}
