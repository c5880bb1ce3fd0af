package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportActors;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.support.ProgressRunners;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.ToLongFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The two workers of {@link TransportContractSuite}: the transport under test started twice in this
 * JVM, as an origin and as a target whose memory is one region ({@link TransportContractSuite#REGION}
 * bytes, key {@link TransportContractSuite#KEY_ID}), their control actors on an actor system of
 * their own and their progress agents on dedicated threads, as the runtime runs them.
 */
final class ContractWorkers {
    final Transport origin;
    final Transport target;
    final UUID targetId;
    final UUID originWorker;
    /** The target's region, through which the suite stops and inspects the target. */
    final ContractTarget memory;
    /** The key naming the region, unpacked at the origin. */
    final RemoteKey key;
    /** The target worker's exactly-once windows, which every transport of it shares. */
    final ExactlyOnceWindows targetWindows;
    private final ActorSystem<Void> system;
    private final RegionHandle handle;
    private final List<ProgressRunners> progress;

    private ContractWorkers(Transport origin, Transport target, UUID targetId, UUID originWorker,
            ContractTarget memory, RemoteKey key, ExactlyOnceWindows targetWindows, ActorSystem<Void> system,
            RegionHandle handle, List<ProgressRunners> progress) {
        this.origin = origin;
        this.target = target;
        this.targetId = targetId;
        this.originWorker = originWorker;
        this.memory = memory;
        this.key = key;
        this.targetWindows = targetWindows;
        this.system = system;
        this.handle = handle;
        this.progress = progress;
    }

    /**
     * Starts both workers' transports and registers the target's region.
     *
     * @param name the transport's provider name
     * @param section its own settings, over its reference defaults
     * @param sharedRegion whether the region is memory the target's transport allocates to share
     * @param baseAddress the address peers name for the region's first byte
     */
    static ContractWorkers start(String name, Config section, boolean sharedRegion,
            ToLongFunction<ByteBuffer> baseAddress) {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "contract-" + name,
                ConfigFactory.parseString("pekko.log-dead-letters = off").withFallback(ConfigFactory.load()));
        Config config = section.withFallback(ConfigFactory.defaultReference().getConfig("fenceline.transport." + name));
        List<ProgressRunners> progress = new ArrayList<>();
        List<AutoCloseable> started = new ArrayList<>(); // what a failed start closes, last first
        try {
            return start(name, config, sharedRegion, baseAddress, system, progress, started);
        } catch (RuntimeException | Error e) {
            progress.forEach(ProgressRunners::close);
            for (int i = started.size() - 1; i >= 0; i--) {
                try {
                    started.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            system.terminate();
            throw e;
        }
    }

    private static ContractWorkers start(String name, Config config, boolean sharedRegion,
            ToLongFunction<ByteBuffer> baseAddress, ActorSystem<Void> system, List<ProgressRunners> progress,
            List<AutoCloseable> started) {
        TransportProvider provider = null;
        for (TransportProvider p : ServiceLoader.load(TransportProvider.class)) {
            if (p.name().equals(name)) {
                provider = p;
            }
        }
        assertNotNull(provider, "no transport provider named " + name + " on the class path");
        UUID targetId = UUID.randomUUID();
        UUID originWorker = UUID.randomUUID();
        ContractTarget[] late = new ContractTarget[1]; // the target's memory, once its transport allocated it
        TransportContext targetContext = new TransportContext(targetId, "target", config, new LateTarget(late));
        Transport target = start(system, progress, provider, targetContext);
        started.add(target::close);
        Transport origin = start(system, progress, provider, new TransportContext(originWorker, "origin", config,
                new ContractTarget(ByteBuffer.allocateDirect(64), 0)));
        started.add(origin::close);
        ByteBuffer region;
        RegionHandle handle;
        if (sharedRegion) {
            dev.fenceline.spi.SharedMemory shared = target.allocateShared(TransportContractSuite.REGION);
            assertNotNull(shared, name + " allocates no shared memory (sharedRegion)");
            region = shared.buffer().order(ByteOrder.nativeOrder());
            handle = shared;
        } else {
            region = ByteBuffer.allocateDirect(TransportContractSuite.REGION).order(ByteOrder.nativeOrder());
            handle = target.registerRegion(region);
        }
        if (handle != null) {
            started.add(handle::close);
        }
        ContractTarget memory = new ContractTarget(region, baseAddress.applyAsLong(region));
        late[0] = memory;
        if (handle != null) {
            handle.registered(TransportContractSuite.KEY_ID);
        }
        RemoteKey key = new RemoteKey(targetId, TransportContractSuite.KEY_ID, memory.base, TransportContractSuite.REGION,
                handle == null ? Map.of() : Map.of(name, handle.transportData()));
        origin.keyUnpacked(key);
        return new ContractWorkers(origin, target, targetId, originWorker, memory, key, targetContext.windows(), system,
                handle, progress);
    }

    private static Transport start(ActorSystem<Void> system, List<ProgressRunners> progress, TransportProvider p,
            TransportContext context) {
        Transport transport = p.create(context);
        String name = context.workerName();
        transport.start(new TransportActors() {
            @Override
            public <T> ActorRef<T> spawn(Behavior<T> behavior, String actor) {
                return system.systemActorOf(behavior, name + "-" + transport.name() + "-" + actor, Props.empty());
            }
        });
        progress.add(ProgressRunners.start(name, transport.progressAgents(), ProgressRunners.Threading.DEDICATED, null));
        return transport;
    }

    /**
     * @param wait the longest wait
     * @return the lanes of a new connection from the origin to the target
     */
    List<LaneConnection> connect(Duration wait) throws ExecutionException, InterruptedException, TimeoutException {
        return origin.connect(targetId, target.localAddress()).toCompletableFuture()
                .get(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets a stopped target go, and stops both transports and the actor system. */
    void close() {
        memory.release();
        if (handle != null) {
            handle.close();
        }
        progress.forEach(ProgressRunners::close); // as the runtime: before close()
        origin.close();
        target.close();
        system.terminate();
    }
}
