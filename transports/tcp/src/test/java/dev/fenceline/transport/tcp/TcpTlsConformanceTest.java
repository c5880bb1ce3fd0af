package dev.fenceline.transport.tcp;

import com.typesafe.config.Config;
import dev.fenceline.testkit.TestCertificates;
import dev.fenceline.testkit.TransportConformanceSuite;
import java.io.IOException;
import java.nio.file.Files;

/**
 * One rail over loopback with mutual TLS (PKCS#12 key and trust stores, no secret) through the
 * JDK's engine; {@link TcpTlsTest} runs the default engine (BoringSSL where it loads).
 */
class TcpTlsConformanceTest extends TransportConformanceSuite {
    @Override
    protected Config configuration() {
        try {
            TestCertificates certs = TestCertificates.create(Files.createTempDirectory("fenceline-tls"), "member");
            return com.typesafe.config.ConfigFactory.parseString("fenceline.transport.tcp.tls.provider = jdk")
                    .withFallback(certs.tcpConfig("member")).withFallback(TcpConfigs.tlsLoopback("127.0.0.1:0"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
