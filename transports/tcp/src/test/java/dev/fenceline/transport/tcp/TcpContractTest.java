package dev.fenceline.transport.tcp;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.testkit.TransportContractSuite;

/** The SPI contract suite on a tcp lane over loopback; a broken connection is its socket closed. */
class TcpContractTest extends TransportContractSuite {
    @Override
    protected String transportName() {
        return TcpTransportProvider.NAME;
    }

    @Override
    protected Config section() {
        return ConfigFactory.parseString("listen = [\"127.0.0.1:0\"]\nsecret = \"" + TcpConfigs.SECRET + "\"\n"
                + "queue-depth = 8");
    }

    @Override
    protected void breakConnection(LaneConnection lane) {
        ((TcpLane) lane).channel().close().syncUninterruptibly();
    }
}
