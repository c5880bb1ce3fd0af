package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The SPI contract suite on the ucx transport over UCT's posix with cma beside it (cma's zero-copy
 * lane for bulk transfers into registered memory, posix for the rest); as over posix alone, a broken
 * connection is its channel failed, as when UCT reports the peer failed.
 */
class UcxCmaContractTest extends UcxPosixContractTest {
    @Override
    protected Config section() {
        return ConfigFactory.parseString("tls = [posix, cma]\nqueue-depth = 8");
    }
}
