package dev.fenceline.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * A cluster member in a process of its own, for the multi-JVM tests: joins the seed, advertises a
 * worker named {@code kv} with a 4 KiB region published as {@code table}, runs an echo actor that
 * sends whatever it receives to the test's collector, prints {@code MEMBER <address> <uid>} once it
 * is up and its worker is listed, and runs until its standard input closes or it is killed.
 */
public final class ClusterMember {
    /** Where members' echo actors register. */
    static final ServiceKey<Object> ECHO = ServiceKey.create(Object.class, "test-echo");
    /** Where the test's collector registers. */
    static final ServiceKey<Object> COLLECTOR = ServiceKey.create(Object.class, "test-collector");

    private ClusterMember() {
    }

    /**
     * @param seed the seed node's address, or null for none (the member joins itself)
     * @param port the port to bind, or 0
     * @return the configuration of a test member
     */
    /**
     * A member of a cluster of its own: joined to itself, and up.
     *
     * @param system a cluster actor system made with {@link #config}
     * @return its cluster
     * @throws InterruptedException if interrupted while waiting
     */
    static Cluster joinedToItself(ActorSystem<?> system) throws InterruptedException {
        Cluster cluster = Cluster.get(system);
        cluster.manager().tell(org.apache.pekko.cluster.typed.Join.create(cluster.selfMember().address()));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (cluster.selfMember().status() != MemberStatus.up() && System.nanoTime() < until) {
            Thread.sleep(20); // the test's thread, not an actor
        }
        org.junit.jupiter.api.Assertions.assertEquals(MemberStatus.up(), cluster.selfMember().status(),
                "this member joined itself");
        return cluster;
    }

    static Config config(String seed, int port) {
        return ConfigFactory.parseString((seed == null ? "" : "pekko.cluster.seed-nodes = [\"" + seed + "\"]\n")
                + "pekko.remote.artery.canonical.port = " + port)
                .withFallback(ConfigFactory.parseResources("member.conf")).withFallback(ConfigFactory.load());
    }

    /**
     * @param args the seed node's address and the port to bind
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.setup(ctx -> {
            ctx.spawn(echo(), "echo");
            return Behaviors.empty();
        }), "fenceline-test", config(args[0], Integer.parseInt(args[1])));
        try {
            Cluster cluster = Cluster.get(system);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (cluster.selfMember().status() != MemberStatus.up() && System.nanoTime() < until) {
                Thread.sleep(20); // a process's main thread, not an actor
            }
            Worker kv = Fenceline.get(system).newWorker("kv").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion table = kv.allocate(4096);
            FencelineCluster fc = FencelineCluster.get(system);
            fc.advertise(kv, java.util.Map.of("table", table)).toCompletableFuture().get(10, TimeUnit.SECONDS);
            System.out.println("MEMBER " + cluster.selfMember().address() + " "
                    + cluster.selfMember().uniqueAddress().longUid());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // the test closes our input when it is done with us
            }
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Sends everything it receives on to the test's collector: a round trip through Artery. */
    static Behavior<Object> echo() {
        return Behaviors.setup(ctx -> {
            ctx.getSystem().receptionist().tell(Receptionist.register(ECHO, ctx.getSelf()));
            ActorRef<Receptionist.Listing> listings = ctx.messageAdapter(Receptionist.Listing.class, l -> l);
            ctx.getSystem().receptionist().tell(Receptionist.subscribe(COLLECTOR, listings));
            java.util.Set<ActorRef<Object>> collectors = new java.util.HashSet<>();
            return Behaviors.receive(Object.class)
                    .onMessage(Receptionist.Listing.class, l -> {
                        collectors.clear();
                        collectors.addAll(l.getServiceInstances(COLLECTOR));
                        return Behaviors.same();
                    })
                    .onAnyMessage(m -> {
                        collectors.forEach(c -> c.tell(m));
                        return Behaviors.same();
                    })
                    .build();
        });
    }
}
