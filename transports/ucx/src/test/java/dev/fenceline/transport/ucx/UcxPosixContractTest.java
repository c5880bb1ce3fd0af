package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.testkit.TransportContractSuite;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI contract suite on the ucx transport over UCT's posix shared memory (memory it does not
 * reach, so every operation is a message the target applies); a broken connection is its channel
 * failed, as when UCT reports the peer failed. {@link UcxTcpContractTest} runs it over UCT's tcp.
 */
class UcxPosixContractTest extends TransportContractSuite {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Override
    protected String transportName() {
        return UcxTransportProvider.NAME;
    }

    @Override
    protected Config section() {
        return ConfigFactory.parseString("tls = [posix]\nqueue-depth = 8");
    }

    @Override
    protected void breakConnection(LaneConnection lane) {
        ((UcxLane) lane).breakChannel(new EndpointFailedException("contract: the channel broke"));
    }
}
