package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.support.Host;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The peer workers' control segments a worker keeps mapped, by name (any thread): those it dialed
 * and those whose CONNECTs it took, at most {@code max-peers}. A CONNECT's segment is mapped to read
 * its gate and kept only once the gate shows the CONNECT is its origin's; one not kept is unmapped
 * at once. A gone peer's (its worker closed or its process died) is let go.
 */
final class ShmPeerSegments {
    private final Map<String, Inbox> kept = new ConcurrentHashMap<>();
    /** Bumped after each change of {@link #kept}: the polling thread then takes a new {@link #all()}. */
    private final AtomicInteger changes = new AtomicInteger();
    private final Path directory;
    /** Whether only sealed segments are mapped ({@code segments = sealed}). */
    private final boolean sealedOnly;
    private final int maxPeers;
    /** Told of each segment kept, after it is: its process is watched, and the polling thread woken. */
    private final Consumer<Inbox> onKept;

    /**
     * @param directory where segments are
     * @param sealedOnly whether only sealed segments may be mapped ({@link Segments#open(Path, boolean)})
     * @param maxPeers the {@code max-peers} setting
     * @param onKept told of each segment kept
     */
    ShmPeerSegments(Path directory, boolean sealedOnly, int maxPeers, Consumer<Inbox> onKept) {
        this.directory = directory;
        this.sealedOnly = sealedOnly;
        this.maxPeers = maxPeers;
        this.onKept = onKept;
    }

    /**
     * @param address a peer worker's shm address part
     * @return its segment, kept (mapped and kept now if need be)
     * @throws EndpointFailedException if it is on another host, boot or PID namespace, or gone
     */
    Inbox ofAddress(byte[] address) {
        ShmAddress a = ShmAddress.decode(address);
        String here = Host.bootId() + " " + Host.pidNamespaceId();
        if (!a.host().equals(here)) {
            throw new EndpointFailedException("shm: the peer runs on another host, boot or PID namespace (" + a.host()
                    + ", here " + here + "); shared memory cannot reach it");
        }
        if (!Host.alive(a.pid(), a.start())) {
            throw new EndpointFailedException("shm: the peer process " + a.pid() + " is gone");
        }
        return open(a.control());
    }

    /** @return the segment kept for {@code name}, mapped and kept now if need be */
    Inbox open(String name) {
        return adopt(map(name));
    }

    /**
     * @param name a peer's control segment
     * @return the one kept already, or a new mapping not kept yet ({@link #adopt}, {@link #discard})
     * @throws EndpointFailedException if it cannot be mapped, its worker closed or stopped serving, or
     *     {@code max-peers} are kept
     */
    Inbox map(String name) {
        Inbox known = kept.get(name);
        if (known != null) {
            if (known.stoppedServing()) { // its watcher lets it go at its next tick; a CONNECT would wait unread
                throw new EndpointFailedException("shm: the " + known.goneReason());
            }
            return known;
        }
        if (kept.size() >= maxPeers) {
            throw new EndpointFailedException("shm: " + kept.size() + " peer workers' control segments are mapped,"
                    + " the most " + ShmSettings.SECTION + ".max-peers = " + maxPeers + " allows; " + name + " is not");
        }
        try {
            return Inbox.open(directory.resolve(name), sealedOnly);
        } catch (IOException e) {
            throw new EndpointFailedException("shm: cannot map the peer's control segment " + name + ": " + e, e);
        }
    }

    /**
     * Keeps a peer's mapped segment: polled, and its process watched from now on.
     *
     * @return the segment kept for its name (another thread may have kept one first: then this one
     *     is unmapped)
     */
    Inbox adopt(Inbox opened) {
        boolean fresh = !opened.everKept;
        opened.everKept = true; // before another thread can see it: discard never unmaps it then
        Inbox before = kept.putIfAbsent(opened.name, opened);
        if (before != null) {
            if (fresh) {
                opened.unmap(); // never published: this thread alone has it
            }
            return before;
        }
        changes.incrementAndGet();
        onKept.accept(opened);
        return opened;
    }

    /**
     * Unmaps a segment {@link #map} mapped, unless it was ever kept: one kept, even if let go since
     * (its process found gone), may still be read by lanes, the polling thread's snapshot and its
     * watcher, so only the garbage collector unmaps it.
     */
    void discard(Inbox mapped) {
        if (!mapped.everKept) {
            mapped.unmap();
        }
    }

    /**
     * @return whether the peer's segment is still kept: until its worker was found closed or its
     *     process gone (one failed read of /proc is not that), after which it is let go
     */
    boolean kept(Inbox peer) {
        return kept.get(peer.name) == peer;
    }

    /**
     * A peer worker closed or its process is gone: its segment is let go (a new connect maps it
     * again, and finds it gone).
     */
    void forget(Inbox peer) {
        if (kept.remove(peer.name, peer)) {
            changes.incrementAndGet();
        }
    }

    /** @return a count that changes after each change of the segments kept */
    int changes() {
        return changes.get();
    }

    /** @return the segments kept now */
    Inbox[] all() {
        return kept.values().toArray(new Inbox[0]);
    }
}
