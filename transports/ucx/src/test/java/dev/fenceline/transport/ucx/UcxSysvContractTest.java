package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The SPI contract suite on the ucx transport over UCT's sysv shared memory; as over posix alone, a
 * broken connection is its channel failed, as when UCT reports the peer failed.
 */
class UcxSysvContractTest extends UcxPosixContractTest {
    @Override
    protected Config section() {
        return ConfigFactory.parseString("tls = [sysv]\nqueue-depth = 8");
    }
}
