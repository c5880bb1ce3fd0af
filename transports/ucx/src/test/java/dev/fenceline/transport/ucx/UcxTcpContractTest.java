package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The SPI contract suite on the ucx transport over UCT's tcp on loopback; as over posix, a broken
 * connection is its channel failed, as when UCT reports the peer failed.
 */
class UcxTcpContractTest extends UcxPosixContractTest {
    @Override
    protected Config section() {
        return ConfigFactory.parseString("tls = [tcp]\ndevices = [lo]\ntcp-unchecked-writes = accept\nqueue-depth = 8");
    }
}
