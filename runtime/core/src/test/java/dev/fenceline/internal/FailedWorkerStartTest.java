package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
 * A worker whose transport refuses to start, or whose address no peer could read, leaves nothing
 * behind: its handlers were still watched, process-wide, by the slow-handler watchdog (a worker's
 * worth of state per failed start), and the transports it had started stayed open (after an Error,
 * or a close that threw, too).
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

            // A transport that started but offers an address no peer could read: closed again.
            java.util.List<String> closed = new java.util.ArrayList<>();
            TransportProvider huge = starting("refusing", new byte[(1 << 16) + 1], () -> closed.add("closed"));
            CompletableFuture<?> w = WorkerImpl.start("huge", kit.system(), settings, config, Map.of("refusing", huge))
                    .toCompletableFuture();
            assertTrue(w.isCompletedExceptionally(), "the start failed");
            assertEquals(java.util.List.of("closed"), closed, "the transport it started is closed");
            assertEquals(before, SlowHandlers.watched(), "and the worker is not watched");

            // An Error from a later transport (a native library that fails to link): the ones started
            // are closed all the same, each whatever the one before threw on its close.
            java.util.List<String> events = new java.util.ArrayList<>();
            Config three = ConfigFactory.parseString("fenceline.transports = [a, b, c]")
                    .withFallback(ConfigFactory.defaultReference()).resolve();
            UnsatisfiedLinkError thrown = assertThrows(UnsatisfiedLinkError.class, () -> WorkerImpl.start("linking",
                    kit.system(), FencelineSettings.fromConfig(three), three, Map.of(
                            "a", recording("a", events, true), "b", recording("b", events, false), "c", linkFailing())));
            assertEquals("libnothing.so: cannot open shared object file", thrown.getMessage());
            assertEquals(java.util.List.of("a closed", "b closed"), events, "both started transports are closed");
            assertEquals(1, thrown.getSuppressed().length, "a's failed close is kept on the start's failure");
            assertEquals("a: close failed", thrown.getSuppressed()[0].getMessage());
            assertEquals(before, SlowHandlers.watched(), "and the worker is not watched");
        } finally {
            kit.shutdownTestKit();
        }
    }

    /** A transport that starts, records its close, and (if {@code failClose}) throws an Error from it after. */
    private static TransportProvider recording(String name, java.util.List<String> events, boolean failClose) {
        return starting(name, new byte[] {1}, () -> {
            events.add(name + " closed");
            if (failClose) {
                throw new NoClassDefFoundError(name + ": close failed");
            }
        });
    }

    /** A transport that starts with {@code address} and runs {@code onClose} when closed; nothing else is expected of it. */
    private static TransportProvider starting(String name, byte[] address, Runnable onClose) {
        return new TransportProvider() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Transport create(TransportContext context) {
                return (Transport) java.lang.reflect.Proxy.newProxyInstance(Transport.class.getClassLoader(),
                        new Class<?>[] {Transport.class}, (self, m, args) -> switch (m.getName()) {
                            case "localAddress" -> address;
                            case "name" -> name;
                            case "close" -> {
                                onClose.run();
                                yield null;
                            }
                            case "hashCode" -> System.identityHashCode(self);
                            case "equals" -> self == args[0];
                            case "toString" -> name + " transport";
                            default -> throw new AssertionError("Transport." + m.getName() + " not expected here");
                        });
            }
        };
    }

    /** A transport whose native library cannot be linked. */
    private static TransportProvider linkFailing() {
        return new TransportProvider() {
            @Override
            public String name() {
                return "c";
            }

            @Override
            public Transport create(TransportContext context) {
                throw new UnsatisfiedLinkError("libnothing.so: cannot open shared object file");
            }
        };
    }
}
