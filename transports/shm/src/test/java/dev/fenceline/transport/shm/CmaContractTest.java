package dev.fenceline.transport.shm;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.testkit.TransportContractSuite;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI contract suite on the cross-memory-attach lane (lane 1 beside the ring lane): it copies
 * into the target process itself and completes each post on return, so the contracts about
 * operations left outstanding do not apply to it (reported as aborted, with the reason).
 */
class CmaContractTest extends TransportContractSuite {
    @BeforeAll
    static void cmaWorksHere() {
        String why = Cma.unavailable();
        Assumptions.assumeTrue(why == null, "cross-memory attach is not available here: " + why);
    }

    @Override
    protected String transportName() {
        return ShmTransportProvider.NAME;
    }

    @Override
    protected Config section() {
        return ConfigFactory.parseString("cma = auto\nqueue-depth = 8");
    }

    @Override
    protected int laneIndex() {
        return 1;
    }

    /** The lane writes into the target process at the key's addresses: they must be the real ones. */
    @Override
    protected long baseAddress(ByteBuffer region) {
        return com.kenai.jffi.MemoryIO.getInstance().getDirectBufferAddress(region);
    }

    @Override
    protected void breakConnection(LaneConnection lane) {
        ((CmaLane) lane).peerGone();
    }
}
