package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import java.util.BitSet;
import dev.fenceline.spi.support.Heartbeat;
import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A worker's key table: one 40-byte slot per open region, in shared memory its peers on this host
 * map, written by the owner only. A peer checks a region's slot before it reaches the region
 * without the owner (a UCT shared-memory store, a cross-memory-attach copy), so a forged key, a
 * stale one, access the region was not registered for and a closed region are refused at the
 * origin by what the owner wrote, not by what the key claims.
 *
 * <pre>
 * header: 0 magic u32 "FLKT"   4 version u32   8 slots u32   16 heartbeat u64
 * slot i at 64 + 40 i: 0 key id u64   8 address u64   16 length u64   24 access u32   28 state u32
 *                      32 the digest of the region's packed UCT keys u64
 * </pre>
 *
 * The digest binds the UCT keys a region's remote key carries to its slot: a key whose id and range
 * are right but whose packed UCT key was forged (to map another segment of the owner) is refused.
 *
 * The heartbeat counts up while the owner's process runs ({@link Heartbeat}), even while its progress
 * agent is busy in a slow handler: a peer's keepalive reads it.
 *
 * A slot's fields are written before its state turns open (a release store), and its state turns
 * closed before its memory goes; a closed slot is reused only after the registration quarantine, far
 * longer than a check and the access behind it take.
 */
final class KeyTable implements Heartbeat.Beating {
    static final int MAGIC = 0x464C4B54;
    static final int VERSION = 3;
    private static final int HEARTBEAT = 16;
    static final int HEADER = 64;
    static final int SLOT = 40;
    /** The most slots a table has ({@code max-registrations}' bound): a peer's claiming more is not one. */
    static final int MAX_SLOTS = 1 << 20;
    private static final int KEY = 0;
    private static final int ADDRESS = 8;
    private static final int LENGTH = 16;
    private static final int ACCESS = 24;
    private static final int STATE = 28;
    private static final int DIGEST = 32;
    private static final int FREE = 0;
    private static final int OPEN = 1;
    private static final int CLOSED = 2;

    private final UnsafeBuffer table;
    private final int slots;
    /** Slots in use, open or quarantined; guarded by the owner's lock (its regions). */
    private final BitSet taken = new BitSet();

    /**
     * @param address the table's memory, zeroed, at least {@link #bytes(int)} long
     * @param slots how many slots
     */
    KeyTable(long address, int slots) {
        this.slots = slots;
        this.table = new UnsafeBuffer(address, bytes(slots));
        table.putInt(4, VERSION);
        table.putInt(8, slots);
        table.putIntVolatile(0, MAGIC);
    }

    /** One more heartbeat of this worker's process (the heartbeat thread; its own table only). */
    @Override
    public void beat() {
        table.putLongOrdered(HEARTBEAT, table.getLong(HEARTBEAT) + 1);
    }

    /** @return the bytes a table of {@code slots} slots takes */
    static int bytes(int slots) {
        return HEADER + SLOT * slots;
    }

    int slots() {
        return slots;
    }

    /** @return a free slot, or -1 if every slot is taken (the caller holds the owner's lock) */
    int take() {
        int s = taken.nextClearBit(0);
        if (s >= slots) {
            return -1;
        }
        taken.set(s);
        return s;
    }

    /** Opens a slot for a region (the caller holds the owner's lock). */
    void open(int slot, long keyId, long address, long length, java.util.Set<Access> access, long digest) {
        int at = HEADER + SLOT * slot;
        table.putLong(at + DIGEST, digest);
        table.putLong(at + KEY, keyId);
        table.putLong(at + ADDRESS, address);
        table.putLong(at + LENGTH, length);
        table.putInt(at + ACCESS, Access.bits(access));
        table.putIntOrdered(at + STATE, OPEN);
    }

    /** The region closed: peers refuse it from their next check on. */
    void close(int slot) {
        table.putIntVolatile(HEADER + SLOT * slot + STATE, CLOSED);
    }

    /** The quarantine is over: the slot may be taken again (the caller holds the owner's lock). */
    void release(int slot) {
        table.putIntVolatile(HEADER + SLOT * slot + STATE, FREE);
        taken.clear(slot);
    }

    /**
     * A peer's table as this process mapped it. The bytes are the peer's: every read lies inside
     * the table (a slot's words by address, once its index is checked against the table's slots), and
     * what they say is trusted to refuse, and to accept only the extent of a key whose id and digest
     * the slot names ({@link #covers}): the owner vouching for its own memory.
     */
    static final class View {
        private final UnsafeBuffer table;
        private final int slots;

        /**
         * @param address where this process reaches the peer's table
         * @param length how many bytes are mapped there
         * @throws dev.fenceline.FencelineException if it is not a key table
         */
        View(long address, long length) {
            if (length < HEADER) {
                throw new dev.fenceline.FencelineException("ucx: a peer's key table of " + length + " bytes");
            }
            UnsafeBuffer header = new UnsafeBuffer(address, HEADER);
            int n = header.getIntVolatile(8);
            if (header.getIntVolatile(0) != MAGIC || header.getInt(4) != VERSION || n < 0 || n > MAX_SLOTS
                    || (long) HEADER + (long) SLOT * n > length) {
                throw new dev.fenceline.FencelineException("ucx: the peer's key table is not one (magic, version or"
                        + " size)");
            }
            this.slots = n;
            this.table = new UnsafeBuffer(address, bytes(n));
        }

        /** @return the owner's heartbeat: it moves while the owner's process runs */
        long heartbeat() {
            return table.getLongVolatile(HEARTBEAT);
        }

        /**
         * Checks an access to a region by what its owner wrote.
         *
         * @param slot the slot the key names
         * @param digest the digest of the UCT keys the key's ucx part carries ({@link UcxKeyPart#digest()})
         * @param key the key
         * @param address the first byte
         * @param bytes how many
         * @param needed the access it needs
         * @throws RemoteAccessException unknown key, access denied, closed region or out of bounds
         */
        void check(int slot, long digest, RemoteKey key, long address, long bytes, Access needed) {
            if (slot < 0 || slot >= slots) {
                throw new RemoteAccessException(Reason.UNKNOWN_KEY, "ucx: key " + key.shortKey() + " names key-table"
                        + " slot " + slot + " of the owner's " + slots + " (forged key)");
            }
            int at = HEADER + SLOT * slot;
            checkRegistration(table.addressOffset() + at, digest, key, needed);
            key.checkBounds(address, bytes);
            long base = table.getLong(at + ADDRESS);
            long length = table.getLong(at + LENGTH);
            // Every bound is the owner's to write: none may make the differences below overflow
            if (base < 0 || length < 0 || bytes < 0 || bytes > length || address < base
                    || address - base > length - bytes) {
                throw new RemoteAccessException(Reason.OUT_OF_BOUNDS, "ucx: address 0x" + Long.toHexString(address)
                        + " + " + bytes + " outside the region its owner registered for key " + key.shortKey());
            }
        }

        /**
         * Whether a key's whole extent lies in what its owner registered in the slot, for the key's
         * mapping ({@link UcxMapping}), before any access through it.
         *
         * @param slot the slot the key names
         * @param digest the digest of the key's UCT keys
         * @param key the key
         * @return true if the slot is open for this key and its registered bytes cover the key's
         */
        boolean covers(int slot, long digest, RemoteKey key) {
            if (slot < 0 || slot >= slots) {
                return false;
            }
            int at = HEADER + SLOT * slot;
            if (table.getIntVolatile(at + STATE) != OPEN || table.getLong(at + KEY) != key.keyId()
                    || table.getLong(at + DIGEST) != digest) {
                return false;
            }
            long base = table.getLong(at + ADDRESS);
            long length = table.getLong(at + LENGTH);
            return base >= 0 && key.baseAddress() >= base && length >= 0 && key.length() >= 0 && key.length() <= length
                    && key.baseAddress() - base <= length - key.length();
        }

        /**
         * @param slot a slot {@link #covers} accepted
         * @return the slot's bytes alone, for {@link #checkCovered}, which reads them by address: no
         *     offset to compute and bound per access
         * @throws IllegalArgumentException if the table has no such slot
         */
        UnsafeBuffer slotView(int slot) {
            if (slot < 0 || slot >= slots) {
                throw new IllegalArgumentException("ucx: slot " + slot + " of a key table of " + slots);
            }
            return new UnsafeBuffer(table, HEADER + SLOT * slot, SLOT);
        }

        /**
         * Checks an access through a key's mapping, whose extent {@link #covers} accepted: that the slot
         * still holds the same registration (a new one has a new key id and digest), open, with the
         * access, and that the access lies in the key's extent. The registered bounds need no second
         * reading: what the owner writes there later cannot move the key's extent, which bounds the
         * mapping, and only a new registration could make the bytes another region's.
         *
         * @param slot the slot's bytes ({@link #slotView})
         * @param digest the digest of the key's UCT keys
         * @param key the key
         * @param address the first byte
         * @param bytes how many
         * @param needed the access it needs
         * @throws RemoteAccessException unknown key, access denied, closed region or out of bounds
         */
        static void checkCovered(UnsafeBuffer slot, long digest, RemoteKey key, long address, long bytes,
                Access needed) {
            checkRegistration(slot.addressOffset(), digest, key, needed);
            key.checkBounds(address, bytes);
        }

        /**
         * Reads the slot's words by address: the slot lies in the table (its callers checked the
         * index), whose extent the view bounded when the peer's table was mapped, and an address-based
         * buffer's bounds check on each of the four reads lengthened every operation of the fast path.
         * The table stays mapped while read: a table published to calling threads is never unmapped,
         * and one that is not is read only by the progress agent, which is also what unmaps it
         * ({@code UcxPeers.unmapTable}).
         *
         * @param at the slot's address in this process
         */
        private static void checkRegistration(long at, long digest, RemoteKey key, Access needed) {
            int state = UnsafeApi.getIntVolatile(null, at + STATE);
            if (UnsafeApi.getLong(null, at + KEY) != key.keyId() || state == FREE
                    || UnsafeApi.getLong(null, at + DIGEST) != digest) {
                throw new RemoteAccessException(Reason.UNKNOWN_KEY, "ucx: key " + key.shortKey() + " does not match"
                        + " its owner's key table (forged or stale key)");
            }
            if ((UnsafeApi.getInt(null, at + ACCESS) & (1 << needed.ordinal())) == 0) {
                throw new RemoteAccessException(Reason.ACCESS_DENIED, "ucx: the region of key " + key.shortKey()
                        + " was registered without " + needed);
            }
            if (state != OPEN) {
                throw new RemoteAccessException(Reason.REGION_CLOSED, "ucx: the region of key " + key.shortKey()
                        + " was closed by its owner");
            }
        }
    }
}
