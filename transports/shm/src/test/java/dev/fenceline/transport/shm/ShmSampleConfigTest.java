package dev.fenceline.transport.shm;

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
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every shm sample in config/ starts two workers and moves bytes, so the samples cannot rot. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmSampleConfigTest {
    static List<File> samples() {
        String dir = System.getProperty("fencelineTestConfigDir");
        assertNotNull(dir, "surefire passes fencelineTestConfigDir");
        File[] files = new File(dir).listFiles((d, n) -> n.endsWith(".conf"));
        assertNotNull(files, "config directory " + dir + " exists");
        List<File> shm = Arrays.stream(files).sorted().filter(f -> ConfigFactory.parseFile(f)
                .getStringList("fenceline.transports").contains("shm")).toList();
        assertFalse(shm.isEmpty(), "config/ has an shm sample");
        return shm;
    }

    @ParameterizedTest
    @MethodSource("samples")
    void sampleRuns(File sample) throws Exception {
        Config c = ConfigFactory.parseFile(sample);
        try (Fenceline f = Fenceline.create(c)) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion r = b.allocate(1 << 20);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ep.put(ByteBuffer.wrap(new byte[] {7}), r.address() + 5, a.unpackRemoteKey(r.remoteKey().toBytes()));
            ep.put(ByteBuffer.allocate(200_000), r.address() + 1000, a.unpackRemoteKey(r.remoteKey().toBytes()));
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7, r.buffer().get(5));
        }
    }
}
