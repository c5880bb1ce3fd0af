package dev.fenceline.transport.tcp;

import dev.fenceline.spi.LaneListener;
import java.net.InetSocketAddress;
import java.util.UUID;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * One network path to a peer (a local/remote address pair): what its lanes need to know about it,
 * and how they tell its {@link RailActor} that the endpoint closed them or that they died. The
 * actor owns the path's lifecycle; this is only its address.
 */
final class Rail {
    private final int index;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final UUID peer;
    /** Null for a rail no actor drives (a test of one lane): its lanes' events then go nowhere. */
    private volatile ActorRef<RailActor.Command> actor;

    /**
     * @param index the rail's position among its endpoint's rails
     * @param local the local address to connect from, or null to let the kernel choose
     * @param remote the peer's address on this path
     * @param peer the peer worker
     */
    Rail(int index, InetSocketAddress local, InetSocketAddress remote, UUID peer) {
        this.index = index;
        this.local = local;
        this.remote = remote;
        this.peer = peer;
    }

    int index() {
        return index;
    }

    UUID peer() {
        return peer;
    }

    InetSocketAddress local() {
        return local;
    }

    InetSocketAddress remote() {
        return remote;
    }

    /** @param ref the actor that drives this rail, set once as it starts */
    void drivenBy(ActorRef<RailActor.Command> ref) {
        this.actor = ref;
    }

    /** The endpoint closed {@code lane}: it wants nothing more from this rail. */
    void stop(TcpLane lane) {
        tell(new RailActor.Stop(lane));
    }

    /** {@code lane} died (or the endpoint gave up on it) but is still wanted: reconnect. */
    void lost(TcpLane lane, LaneListener listener, Throwable cause) {
        if (listener != null) {
            tell(new RailActor.Lost(lane, listener, cause));
        }
    }

    private void tell(RailActor.Command c) {
        ActorRef<RailActor.Command> a = actor;
        if (a != null) {
            a.tell(c);
        }
    }

    @Override
    public String toString() {
        return "rail " + index + " (" + local + " -> " + remote + ")";
    }
}
