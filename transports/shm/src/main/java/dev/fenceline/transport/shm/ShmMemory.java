package dev.fenceline.transport.shm;

import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.SharedMemory;
import dev.fenceline.spi.TransportContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's memory on shm: the data segments behind the regions it allocates, the key-table
 * slots of the regions it registers (which peers' cma lanes check before each transfer), and the
 * peers' segments it mapped, found from their keys and remembered in them.
 */
final class ShmMemory {
    private static final Logger LOG = LoggerFactory.getLogger(ShmMemory.class);

    private final TransportContext context;
    private final ShmSettings settings;
    private final Path directory;
    private final String prefix;
    private final Inbox inbox;
    /** Whether endpoints get the cross-memory-attach lane (else registered memory needs no key slot). */
    private final boolean cma;
    /** The transport actor, once started: it keeps a closed registration's memory for the quarantine. */
    private final Supplier<ActorRef<ShmTransportActor.Command>> actor;
    private final AtomicInteger segmentCount = new AtomicInteger();
    private final Set<DataSegment> ownSegments = ConcurrentHashMap.newKeySet();
    private final Map<String, DataSegment.Peer> peerSegments = new ConcurrentHashMap<>();
    /**
     * Peer segments this process could not map, by name, with when to try again: until then their
     * operations go through the owner at once, rather than each paying a failed open and its
     * exception (on the endpoint actor, or a calling thread's fast path). Bounded: names come from
     * keys, which a peer makes.
     */
    private final Map<String, Long> unmappable = new ConcurrentHashMap<>();
    /** How long a segment that could not be mapped is not tried again. */
    static final long UNMAPPABLE_RETRY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /** More names than this remembered as unmappable are forgotten together. */
    static final int MAX_UNMAPPABLE = 4096;
    /** Attempts to map a peer's segment that failed. */
    private final java.util.concurrent.atomic.AtomicLong mapFailures = new java.util.concurrent.atomic.AtomicLong();
    /** Key-table slots of registered regions. */
    private final SlotPool keySlots;
    /** This transport's tag in keys' caches. */
    private final Object cacheTag = new Object();

    /**
     * A mapping found for a key, tagged with the transport that mapped it (a key may meet several):
     * a token, not the transport, so a cached key does not keep a closed transport reachable.
     */
    private record CachedSegment(Object owner, DataSegment.Peer segment) {
    }

    /**
     * @param context the worker's
     * @param settings the transport's
     * @param prefix this worker's segment names begin with it
     * @param inbox this worker's control segment, which holds the key table
     * @param cma whether endpoints get the cross-memory-attach lane
     * @param actor the transport actor, null until it started
     */
    ShmMemory(TransportContext context, ShmSettings settings, String prefix, Inbox inbox, boolean cma,
            Supplier<ActorRef<ShmTransportActor.Command>> actor) {
        this.context = context;
        this.settings = settings;
        this.directory = settings.directory();
        this.prefix = prefix;
        this.inbox = inbox;
        this.cma = cma;
        this.actor = actor;
        this.keySlots = new SlotPool(inbox.slots());
    }

    /**
     * @param bytes the size asked for
     * @return a new segment of this process, or null if no segment can be that large
     */
    SharedMemory allocate(long bytes) {
        if (bytes > Integer.MAX_VALUE - DataSegment.HEADER) {
            return null;
        }
        Path file = directory.resolve(prefix + "seg" + segmentCount.incrementAndGet() + "-" + Segments.unguessable());
        try {
            DataSegment[] self = new DataSegment[1];
            self[0] = DataSegment.create(file, bytes, settings.sealedSegments(), () -> ownSegments.remove(self[0]));
            ownSegments.add(self[0]);
            return self[0];
        } catch (IOException e) {
            throw new FencelineException("shm: cannot create segment " + file + ": " + e, e);
        }
    }

    /**
     * Registered memory gets a key-table slot, so peers can check its key before a cross-memory access.
     *
     * @param memory the region
     * @return its handle, or null where there is no cma lane (the ring's owner checks keys itself)
     */
    RegionHandle register(ByteBuffer memory) {
        if (!cma) {
            return null; // reached through the ring, where the owner checks the key
        }
        int slot = keySlots.take();
        if (slot < 0) {
            throw new FencelineException("shm: worker '" + context.workerName() + "' has "
                    + settings.maxRegistrations() + " registered regions, the most "
                    + ShmSettings.SECTION + ".max-registrations allows");
        }
        inbox.claim(slot, com.kenai.jffi.MemoryIO.getInstance().getDirectBufferAddress(memory), memory.capacity());
        byte[] data = CmaLane.keyData(slot, inbox.name);
        return new RegionHandle() {
            @Override
            public byte[] transportData() {
                return data.clone();
            }

            @Override
            public void registered(long keyId) {
                registered(keyId, dev.fenceline.Access.all());
            }

            /** Peers' cma lanes check the slot's access before each transfer. */
            @Override
            public void registered(long keyId, Set<dev.fenceline.Access> access) {
                inbox.open(slot, keyId, dev.fenceline.Access.bits(access));
            }

            /**
             * Peers check the slot before each cross-memory access, but a check and the copy are not
             * one step: the transport actor keeps the memory reachable (not freed) and the slot taken
             * for the registration quarantine, far longer than any access that passed the check can
             * take. With the actor gone (the worker stopped) the slot is never reused.
             */
            @Override
            public void close() {
                inbox.close(slot);
                ActorRef<ShmTransportActor.Command> a = actor.get();
                if (a != null) {
                    a.tell(new ShmTransportActor.Quarantine(slot, memory));
                }
            }
        };
    }

    /**
     * @param key a remote key
     * @return this process's mapping of the key's segment, or null if it is not reachable directly
     */
    DataSegment.Peer peerSegment(RemoteKey key) {
        // Per operation on the fast path: parsing the segment's name out of the key and hashing it
        // was most of the cost of an 8-byte put (JFR), so the key remembers its mapping.
        Object cached = key.transportCache();
        if (cached instanceof CachedSegment c && c.owner() == cacheTag && c.segment().open()) {
            return c.segment();
        }
        return peerSegmentUncached(key, cached); // apart: the fast path's compiled code stays small enough to inline
    }

    private DataSegment.Peer peerSegmentUncached(RemoteKey key, Object cached) {
        if (cached instanceof CachedSegment c && c.owner() == cacheTag) {
            key.transportCache(null); // the owner closed the region: let the mapping go
        }
        DataSegment.Peer seg = lookUpSegment(key);
        if (seg != null && seg.open() && !(cached instanceof CachedSegment other && other.owner() != cacheTag
                && other.segment().open())) {
            key.transportCache(new CachedSegment(cacheTag, seg)); // never evict another worker's live entry
        }
        return seg;
    }

    /**
     * @param key a remote key
     * @return whether it names a data segment (else its region is registered memory, never mapped)
     */
    static boolean namesSegment(RemoteKey key) {
        return DataSegment.nameOf(key.part(ShmTransportProvider.NAME)) != null;
    }

    private DataSegment.Peer lookUpSegment(RemoteKey key) {
        String name = DataSegment.nameOf(key.part(ShmTransportProvider.NAME));
        if (name == null) {
            return null;
        }
        DataSegment.Peer seg = peerSegments.get(name);
        if (seg != null) {
            return seg;
        }
        Long retryAt = unmappable.get(name);
        long now = System.nanoTime();
        if (retryAt != null && (now - retryAt < 0 || !unmappable.replace(name, retryAt, now + UNMAPPABLE_RETRY_NANOS))) {
            return null; // not yet due, or another thread took this retry
        }
        Path file = directory.resolve(name);
        try {
            seg = DataSegment.map(file, settings.sealedSegments(), settings.nativeCopyFrom());
        } catch (IOException | RuntimeException e) {
            mapFailures.incrementAndGet();
            if (unmappable.size() >= MAX_UNMAPPABLE) {
                unmappable.values().removeIf(due -> now - due >= 0);
                if (unmappable.size() >= MAX_UNMAPPABLE) {
                    unmappable.clear(); // names a peer's keys made up, by the thousand: they cost a failed open each
                }
            }
            unmappable.put(name, now + UNMAPPABLE_RETRY_NANOS);
            LOG.debug("shm {}: {} not mapped ({}); operations on it go through the owner, tried again in 1 s at"
                    + " the earliest", context.workerName(), file, e.toString());
            return null;
        }
        DataSegment.Peer before = peerSegments.putIfAbsent(name, seg);
        unmappable.remove(name); // after: a thread between the two finds the mapping, not a due retry
        return before != null ? before : seg;
    }

    /** @return how many attempts to map a peer's segment failed */
    long mapFailures() {
        return mapFailures.get();
    }

    /**
     * @param name a data segment's name
     * @return whether this process maps it as a peer's segment
     */
    boolean maps(String name) {
        return peerSegments.containsKey(name);
    }

    /** @param slot a closed registration's key slot, whose quarantine is over */
    void release(int slot) {
        keySlots.release(slot);
    }

    /** Forgets the mappings of peer segments their owners closed, and unmappable ones due a retry. */
    void forgetClosedPeerSegments() {
        peerSegments.values().removeIf(seg -> !seg.open());
        long now = System.nanoTime();
        unmappable.values().removeIf(retryAt -> now - retryAt >= 0);
    }

    /** The transport closed: its segments go. */
    void close() {
        for (DataSegment s : new ArrayList<>(ownSegments)) {
            s.close();
        }
    }
}
