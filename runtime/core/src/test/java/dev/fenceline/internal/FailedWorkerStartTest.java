package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.actor.WorkerImpl;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker whose transport refuses to start leaves nothing behind: its handlers were still watched,
 * process-wide, by the slow-handler watchdog (a worker's worth of state per failed start).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailedWorkerStartTest {
    @Test
    void aWorkerThatFailsToStartIsNotWatched() {
        ActorTestKit kit = ActorTestKit.create();
        try {
            Config config = ConfigFactory.parseString("fenceline.transports = [refusing]")
                    .withFallback(ConfigFactory.defaultReference()).resolve();
            FencelineSettings settings = FencelineSettings.fromConfig(config);
            TransportProvider refusing = new TransportProvider() {
                @Override
                public String name() {
                    return "refusing";
                }

                @Override
                public Transport create(TransportContext context) {
                    throw new dev.fenceline.ConfigurationException("refusing: its port is in use");
                }
            };
            int before = SlowHandlers.watched();
            for (int i = 0; i < 10; i++) {
                CompletableFuture<?> w = WorkerImpl.start("w" + i, kit.system(), settings, config,
                        Map.of("refusing", refusing)).toCompletableFuture();
                assertTrue(w.isCompletedExceptionally(), "the start failed");
            }
            assertEquals(before, SlowHandlers.watched(), "no failed worker is still watched");
        } finally {
            kit.shutdownTestKit();
        }
    }
}
