package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every tcp sample in config/ starts two workers and moves bytes, with its listen addresses moved
 * to loopback (one per rail, as many as the sample has) so it runs on any machine.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpSampleConfigTest {
    static List<File> samples() {
        String dir = System.getProperty("fencelineTestConfigDir");
        assertNotNull(dir, "surefire passes fencelineTestConfigDir");
        File[] files = new File(dir).listFiles((d, n) -> n.endsWith(".conf"));
        assertNotNull(files, "config directory " + dir + " exists");
        List<File> tcp = Arrays.stream(files).sorted().filter(f -> ConfigFactory.parseFile(f)
                .getStringList("fenceline.transports").contains("tcp")).toList();
        assertFalse(tcp.isEmpty(), "config/ has a tcp sample");
        return tcp;
    }

    @ParameterizedTest
    @MethodSource("samples")
    void sampleRunsOnLoopback(File sample) throws Exception {
        Config c = ConfigFactory.parseFile(sample);
        int rails = c.getStringList("fenceline.transport.tcp.listen").size();
        List<String> loopback = new ArrayList<>();
        for (int i = 1; i <= rails; i++) {
            loopback.add("\"127.0.0." + i + ":0\"");
        }
        Config local = ConfigFactory.parseString("fenceline.transport.tcp.listen = " + loopback).withFallback(c);
        if (c.hasPath("fenceline.transport.tcp.security") && c.getString("fenceline.transport.tcp.security")
                .equals("tls")) {
            // The sample's certificate paths are the deployment's; here a test CA stands in for them.
            dev.fenceline.testkit.TestCertificates certs = dev.fenceline.testkit.TestCertificates.create(
                    java.nio.file.Files.createTempDirectory("fenceline-sample"), "node");
            local = certs.tcpConfig("node").withFallback(local);
        } else {
            local = ConfigFactory.parseString("fenceline.transport.tcp.secret = \"" + TcpConfigs.SECRET + "\"")
                    .withFallback(local);
        }
        try (Fenceline f = Fenceline.create(local)) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion r = b.allocate(1 << 20);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(Math.min(rails, c.getInt("fenceline.transport.tcp.max-rails")), ep.lanes().size());
            ep.put(ByteBuffer.wrap(new byte[] {7}), r.address() + 5, r.remoteKey());
            ep.put(ByteBuffer.allocate(600_000), r.address() + 1000, r.remoteKey());
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7, r.buffer().get(5));
        }
    }
}
