package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The SPI contract suite on cma's lane with {@code uct-flush = always}: its flushes and fences go
 * through UCT's, as an RDMA lane's do, whose completions are not in place.
 */
class UcxUctFlushLaneContractTest extends UcxCmaLaneContractTest {
    @Override
    protected Config section() {
        return ConfigFactory.parseString("tls = [posix, cma]\nqueue-depth = 8\nuct-flush = always");
    }
}
