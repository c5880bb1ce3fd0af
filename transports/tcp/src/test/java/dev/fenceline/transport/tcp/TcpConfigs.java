package dev.fenceline.transport.tcp;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** Configurations the TCP tests share. */
final class TcpConfigs {
    static final String SECRET = "conformance-test-secret-0123456789";

    private TcpConfigs() {
    }

    /** Workers listening on loopback under mutual TLS and no secret; the caller adds the tls keys. */
    static Config tlsLoopback(String... listen) {
        return loopback(listen).withoutPath("fenceline.transport.tcp.secret");
    }

    /** Workers listening on loopback, one rail per address. */
    static Config loopback(String... listen) {
        StringBuilder l = new StringBuilder();
        for (String a : listen) {
            l.append(l.length() == 0 ? "" : ", ").append('"').append(a).append('"');
        }
        return ConfigFactory.parseString("fenceline.transports = [tcp]\n"
                + "fenceline.transport.tcp.listen = [" + l + "]\n"
                + "fenceline.transport.tcp.secret = \"" + SECRET + "\"\n");
    }
}
