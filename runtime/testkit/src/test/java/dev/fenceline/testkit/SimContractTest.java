package dev.fenceline.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.transport.sim.SimFaults;

/** The SPI contract suite on a sim lane, on real time (its fabric thread); a broken connection is a failed lane. */
class SimContractTest extends TransportContractSuite {
    @Override
    protected String transportName() {
        return "sim";
    }

    @Override
    protected Config section() {
        return ConfigFactory.parseString("queue-depth = 8");
    }

    @Override
    protected void breakConnection(LaneConnection lane) {
        SimFaults.fail(lane.id(), "contract: the connection broke");
    }
}
