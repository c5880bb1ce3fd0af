package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.testkit.TransportContractSuite;

/**
 * The SPI contract suite on a tcp lane over loopback; a broken connection is its socket closed. The
 * first operation on the idle lane is written into the socket by the posting thread, so the suite
 * covers frames written directly and by the event loop on one connection.
 */
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
    protected void afterOperations(LaneConnection lane) {
        assertTrue(((TcpLane) lane).directFrames() > 0, "the put on the idle lane was written directly");
    }

    @Override
    protected void breakConnection(LaneConnection lane) {
        ((TcpLane) lane).channel().close().syncUninterruptibly();
    }
}
