package dev.fenceline.transport.shm;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.testkit.TransportContractSuite;

/**
 * The SPI contract suite on the shm ring lane (registered memory, so every operation is a record
 * in the target's inbox); a broken connection is the lane's peer found gone.
 */
class ShmContractTest extends TransportContractSuite {
    @Override
    protected String transportName() {
        return ShmTransportProvider.NAME;
    }

    @Override
    protected Config section() {
        return ConfigFactory.parseString("cma = off\nqueue-depth = 8\nmax-lanes = 4");
    }

    @Override
    protected int connectionsToCycle() {
        return 20; // five times max-lanes
    }

    /** As the polling thread does for a peer found gone; before bind nothing of the lane is in flight. */
    @Override
    protected void breakConnection(LaneConnection lane) {
        ((ShmLane) lane).fail(new EndpointFailedException("contract: the peer is gone"));
    }
}
