package dev.fenceline.cluster;

import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * One advertised worker of this member: registered with the receptionist under the key of all
 * Fenceline workers and under its name's key, it tells other members the worker's address and
 * the keys of the regions published under a name. It stops when the worker closes (the
 * receptionist then forgets it); its regions are the worker's, so they go with it.
 */
final class Advertiser {
    /** Every Fenceline worker of the cluster. */
    static final ServiceKey<Command> ALL = ServiceKey.create(Command.class, "fenceline-workers");

    private Advertiser() {
    }

    /**
     * @param workerName a worker's name
     * @return the key its advertisers register under
     */
    static ServiceKey<Command> key(String workerName) {
        return ServiceKey.create(Command.class, "fenceline-worker-" + workerName);
    }

    /** The advertiser's protocol; {@link Describe} and {@link Lookup} come from other members. */
    sealed interface Command {
    }

    /** What crosses between members: serialized by {@link FencelineSerializer}. */
    sealed interface Wire permits Describe, Lookup, Description, RegionAnswer {
    }

    /**
     * Which worker is this?
     *
     * @param replyTo gets the {@link Description}
     */
    record Describe(ActorRef<Description> replyTo) implements Command, Wire {
    }

    /**
     * The key of the region published under {@code region}.
     *
     * @param region the name
     * @param replyTo gets the {@link RegionAnswer}
     */
    record Lookup(String region, ActorRef<RegionAnswer> replyTo) implements Command, Wire {
    }

    /**
     * Publish a region under a name (replacing an earlier one of that name); local only.
     *
     * @param name the name
     * @param region the region, one of the advertised worker's (checked by the caller)
     * @param replyTo told once it is published
     */
    record Publish(String name, MemoryRegion region, ActorRef<Done> replyTo) implements Command {
    }

    /**
     * Withdraw a name; local only.
     *
     * @param region the name
     * @param replyTo told once it is withdrawn
     */
    record Unpublish(String region, ActorRef<Done> replyTo) implements Command {
    }

    /** The worker closed; local only. */
    record WorkerClosed() implements Command {
        static final WorkerClosed INSTANCE = new WorkerClosed();
    }

    /**
     * A worker, as its member describes it.
     *
     * @param incarnation the member's incarnation (its unique address's uid)
     * @param address the worker's address
     */
    record Description(long incarnation, WorkerAddress address) implements Wire {
    }

    /**
     * @param region the name asked for
     * @param key its key, or null if nothing is published under it
     */
    record RegionAnswer(String region, RemoteKey key) implements Wire {
    }

    /**
     * @param address the worker's address
     * @param incarnation this member's incarnation
     * @param regions the regions published from the start, by name: a member that finds the worker
     *     can look them up at once
     * @return the behavior; it registers itself at once
     */
    static Behavior<Command> create(WorkerAddress address, long incarnation, Map<String, MemoryRegion> regions) {
        return Behaviors.setup(ctx -> {
            ActorRef<Receptionist.Command> receptionist = ctx.getSystem().receptionist();
            receptionist.tell(Receptionist.register(ALL, ctx.getSelf()));
            receptionist.tell(Receptionist.register(key(address.name()), ctx.getSelf()));
            Map<String, Published> published = new HashMap<>();
            regions.forEach((name, region) -> published.put(name, new Published(region)));
            return serving(new Description(incarnation, address), published);
        });
    }

    /**
     * A published region's key, and the region itself only weakly: a region closed and dropped
     * without being unpublished must not keep its memory alive here until someone looks it up.
     */
    private static final class Published {
        final RemoteKey key;
        private final java.lang.ref.WeakReference<MemoryRegion> region;

        Published(MemoryRegion region) {
            this.key = region.remoteKey();
            this.region = new java.lang.ref.WeakReference<>(region);
        }

        /** @return whether the region is still open (an open one is held by its worker's table) */
        boolean open() {
            MemoryRegion r = region.get();
            return r != null && !r.isClosed();
        }
    }

    private static Behavior<Command> serving(Description self, Map<String, Published> regions) {
        return Behaviors.receive(Command.class)
                .onMessage(Describe.class, m -> {
                    m.replyTo().tell(self);
                    return Behaviors.same();
                })
                .onMessage(Lookup.class, m -> {
                    Published p = regions.get(m.region());
                    if (p != null && !p.open()) {
                        regions.remove(m.region()); // closed without unpublish: its key reaches nothing
                        p = null;
                    }
                    m.replyTo().tell(new RegionAnswer(m.region(), p == null ? null : p.key));
                    return Behaviors.same();
                })
                .onMessage(Publish.class, m -> {
                    regions.put(m.name(), new Published(m.region()));
                    m.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onMessage(Unpublish.class, m -> {
                    regions.remove(m.region());
                    m.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onMessage(WorkerClosed.class, m -> Behaviors.stopped()) // the receptionist drops a stopped ref
                .build();
    }
}
