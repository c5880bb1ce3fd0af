package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The SPI contract suite on UCT cma's own lane (zero-copy puts and gets into the region, no
 * messages) beside posix, the region allocated to share: what the lane cannot carry where the
 * target's window sees it (a copy that may have been applied elsewhere) it refuses as unknown.
 */
class UcxCmaLaneContractTest extends UcxPosixSharedRegionContractTest {
    @Override
    protected Config section() {
        return ConfigFactory.parseString("tls = [posix, cma]\nqueue-depth = 8");
    }

    @Override
    protected int laneIndex() {
        return 1;
    }
}
