package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import java.util.HashMap;
import java.util.Map;

/**
 * The remote keys this worker's lanes used (progress agent only): each key's ucx part decoded once,
 * its UCT keys unpacked per iface as lanes need them, and the regions shared memory reaches published
 * to calling threads. Apart from the data path because a key outlives every operation that used it
 * and its release has rules of its own (a published mapping is never unmapped).
 */
final class UcxRemoteKeys {
    /** The most keys unpacked at once (keys are few and long-lived); more go as messages. */
    private static final int MAX_KEYS = 4096;

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxRemoteKeys.class);

    private final UcxAgent agent;
    /** Whether the bound was said to be reached. */
    private boolean warnedFull;
    /**
     * Keys this worker used, with their parts unpacked per iface: by value, so that one key
     * unpacked from its bytes again and again (a service that receives it with each request) is one
     * entry, one UCT key and one mapping, not one per copy.
     */
    private final Map<RemoteKey, KeyEntry> keys = new HashMap<>();

    /** A key's ucx part and its UCT keys, unpacked per iface as lanes need them. */
    private static final class KeyEntry {
        final UcxKeyPart part;
        final long digest;
        final UctRemoteKey[] unpacked;
        final boolean[] tried;
        /** Whether a mapping of it went to calling threads: its UCT key is never released then. */
        boolean published;

        KeyEntry(UcxKeyPart part, int ifaces) {
            this.part = part;
            this.digest = part.digest();
            this.unpacked = new UctRemoteKey[ifaces];
            this.tried = new boolean[ifaces];
        }
    }

    UcxRemoteKeys(UcxAgent agent) {
        this.agent = agent;
    }

    /**
     * The UCT key through which this lane's iface reaches the operation's region, or null: the key
     * has no part for the iface's memory domain, or the iface's hardware would reach memory that no
     * check guards (UCT's tcp writes any address of the target without a key; shared memory is
     * checked against the owner's key table, so it needs the table mapped), or the key's extent does
     * not lie whole in the segment its unpacking mapped here ({@link ProcessMappings}).
     */
    UctRemoteKey hardwareKey(UcxLane lane, UcxOp op) {
        UcxChannel ch = lane.channel;
        UctIfaceAttributes a = ch.iface.attributes();
        boolean memory = ch.iface.resource().deviceType().equals("shm");
        boolean checked = ch.peer.table != null && memory;
        if (memory ? !checked : !a.keyedMemory()) {
            return null; // shared memory's UCT key names a segment, not a permission: unchecked without the table
        }

        KeyEntry e = entry(op.key);
        if (e == null) {
            return null;
        }
        int i = ch.ifaceIndex;
        if (!e.tried[i]) {
            e.tried[i] = true;
            byte[] packed = e.part.rkey(ch.iface.resource().memoryDomain());
            if (packed != null && (!checked || e.part.slot() != UcxKeyPart.NO_SLOT)) {
                ProcessMappings.Snapshot before = memory && a.has(UctIfaceAttributes.MD_RKEY_PTR)
                        ? ProcessMappings.snapshot() : null;
                try {
                    e.unpacked[i] = ch.iface.unpack(packed);
                } catch (UctException refused) {
                    e.unpacked[i] = null; // the target applies it instead
                }
                if (before != null && e.unpacked[i] != null && !mappedWhole(before, e.unpacked[i], op.key)) {
                    e.unpacked[i].close(); // the iface would reach past what it mapped
                    e.unpacked[i] = null;
                }
                if (checked && e.unpacked[i] != null && a.has(UctIfaceAttributes.MD_RKEY_PTR)) {
                    publish(op.key, e, e.unpacked[i], ch.peer);
                }
            }
        } else if (e.published && e.unpacked[i] != null && op.key.transportCache() == null && checked
                && a.has(UctIfaceAttributes.MD_RKEY_PTR)) {
            publish(op.key, e, e.unpacked[i], ch.peer); // another copy of a key already mapped: the same mapping
        }
        return e.unpacked[i];
    }

    /**
     * Whether the key's whole extent lies in what unpacking its UCT key mapped here: the segment's
     * address and length are in the peer's packed key, the key's extent is the peer's word too, and
     * the iface (or a calling thread) stores wherever they point.
     */
    private static boolean mappedWhole(ProcessMappings.Snapshot before, UctRemoteKey rkey, RemoteKey key) {
        long pointer = rkey.pointer(key.baseAddress());
        return pointer != 0 && ProcessMappings.reaches(before, pointer, key.length());
    }

    /**
     * Gives calling threads the region through the key's pointer, in the key's transport cache (not
     * over another transport's live entry: a key may meet several).
     */
    private void publish(RemoteKey key, KeyEntry e, UctRemoteKey rkey, UcxPeer peer) {
        long pointer = rkey.pointer(key.baseAddress());
        Object cached = key.transportCache();
        if (pointer == 0 || key.length() > Integer.MAX_VALUE
                || cached != null && !(cached instanceof UcxMapping m && m.owner() == agent)
                || !peer.table.covers(e.part.slot(), e.digest, key)) {
            return; // a key its owner's table does not cover whole: the agent checks each of its accesses
        }
        e.published = true;
        rkey.keepForProcess(); // or the transport's close would unmap it under a calling thread
        if (!peer.tablePublished) {
            peer.tablePublished = true;
            peer.tableKey.keepForProcess(); // every access through the mapping checks the table's slot
        }
        key.transportCache(UcxMapping.of(agent, peer.id, peer.table, e.part.slot(), e.digest, key.baseAddress(),
                com.kenai.jffi.MemoryIO.getInstance().newDirectByteBuffer(pointer, (int) key.length())
                        .order(java.nio.ByteOrder.nativeOrder())));
    }

    private KeyEntry entry(RemoteKey key) {
        KeyEntry e = keys.get(key);
        if (e != null) {
            return e;
        }
        byte[] part = key.part(UcxTransportProvider.NAME);
        if (part.length == 0) {
            return null;
        }
        UcxKeyPart decoded;
        try {
            decoded = UcxKeyPart.decode(part);
        } catch (FencelineException malformed) {
            return null; // the target refuses what it must
        }
        if (keys.size() >= MAX_KEYS) {
            // Past the bound, such keys go as messages (their UCT keys would never be released):
            // slower, and said once, so that a service whose regions come and go knows why.
            if (!warnedFull) {
                warnedFull = true;
                LOG.warn("{}: {} remote keys are unpacked, the most one worker keeps; operations on keys beyond"
                        + " them go as messages through their targets (no key is let go before the transport closes:"
                        + " keep regions registered for long rather than one per request)", agent.roleName(), MAX_KEYS);
            }
            return null;
        }
        e = new KeyEntry(decoded, agent.ifaceCount());
        keys.put(key, e);
        return e;
    }

    /**
     * Releases the unpacked keys no calling thread may use (agent thread). A key whose mapping was
     * published stays mapped as long as the process: a thread may be inside an access through it
     * when the transport closes, and unmapping it then would crash the process.
     */
    void release() {
        for (KeyEntry e : keys.values()) {
            for (UctRemoteKey k : e.unpacked) {
                if (k != null && !e.published) {
                    k.close();
                }
            }
        }
        keys.clear();
    }

    /** Checks the region's slot in its owner's key table, where the iface reaches memory unguarded. */
    void check(UcxLane lane, UcxOp op, Access needed, long bytes) {
        KeyTable.View table = lane.channel.peer.table;
        if (table != null && lane.channel.iface.resource().deviceType().equals("shm")) {
            KeyEntry e = keys.get(op.key);
            table.check(e.part.slot(), e.digest, op.key, op.remoteAddress, bytes, needed);
        } else {
            op.key.checkBounds(op.remoteAddress, bytes);
        }
    }
}
