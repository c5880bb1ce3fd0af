package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.actor.EndpointProtocol;
import dev.fenceline.actor.WorkerActor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Tier 3 on the user's own actor system: Fenceline as a Pekko extension. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExtensionTest {
    private static final ActorTestKit KIT = ActorTestKit.create("ext",
            ConfigFactory.parseString("fenceline.transports = [sim]").withFallback(ConfigFactory.load()));

    @AfterAll
    static void stop() {
        KIT.shutdownTestKit();
    }

    @Test
    void oneRuntimePerSystemAndWorkersAreSystemActors() throws Exception {
        Fenceline f = Fenceline.get(KIT.system());
        assertSame(f, Fenceline.get(KIT.system()));
        Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
        Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        MemoryRegion r = b.allocate(64);
        Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(0L, ep.atomicFetch64(AtomicOp.ADD, r.address(), r.remoteKey(), 3)
                .toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals(3L, r.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0));
    }

    @Test
    void theWorkerProtocolIsUsableDirectly() throws Exception {
        Fenceline f = Fenceline.get(KIT.system());
        Worker b = f.newWorker("direct-b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        // Spawn a worker actor of our own next to the runtime's and talk to it with a probe.
        var settings = dev.fenceline.internal.FencelineSettings.fromConfig(KIT.system().settings().config());
        var transports = new java.util.LinkedHashMap<String, dev.fenceline.spi.Transport>();
        var registrations = new dev.fenceline.internal.RegistrationTable(java.util.UUID.randomUUID(), "direct-a");
        transports.put("sim", new dev.fenceline.transport.sim.SimTransportProvider().create(
                new dev.fenceline.spi.TransportContext(java.util.UUID.randomUUID(), "direct-a",
                        KIT.system().settings().config().getConfig("fenceline.transport.sim"), registrations)));
        var worker = KIT.spawn(WorkerActor.create(settings, "direct-a", transports,
                new java.util.concurrent.atomic.AtomicLong()));
        TestProbe<EndpointProtocol.ConnectResult> probe = KIT.createTestProbe();
        worker.tell(new WorkerActor.Connect(b.address(), probe.getRef()));
        EndpointProtocol.ConnectResult result = probe.receiveMessage(java.time.Duration.ofSeconds(10));
        assertEquals(null, result.error());
        assertEquals(2, result.endpoint().lanes().size());
        TestProbe<org.apache.pekko.Done> done = KIT.createTestProbe();
        worker.tell(new WorkerActor.Close(done.getRef()));
        done.expectMessage(java.time.Duration.ofSeconds(10), org.apache.pekko.Done.getInstance());
    }
}
