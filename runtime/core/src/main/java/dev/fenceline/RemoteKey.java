package dev.fenceline;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * The capability a peer needs to access a registered {@link MemoryRegion}: the owner's identity,
 * an unguessable 64-bit key, the region's address range, and one part per transport that
 * registered the region (what that transport needs to reach it: a segment's name, a key-table
 * slot, an RDMA memory key), named by the transport. Each transport reads only its own part, so a
 * peer that shares any one of the owner's transports can use the key. Pack it with
 * {@link #toBytes()}, send it to the peer by any means, and unpack it there with
 * {@link Worker#unpackRemoteKey(byte[])}.
 *
 * <p>It also says what the owner lets peers do ({@link #access()}); the origin refuses the rest.
 *
 * <p>Packed (big-endian): magic "FLRK" u32, version u8 (2), owner u128, key u64, base u64, length
 * u64, access u8 ({@link Access#bits}), part count u8, then per part: name length u8, name
 * (ASCII), data length u32, data.
 */
public final class RemoteKey {
    private static final int MAGIC = 0x464C524B; // "FLRK"
    private static final byte VERSION = 2;
    private static final int HEADER_BYTES = 4 + 1 + 16 + 8 + 8 + 8 + 1 + 1;
    /** The most bytes of part data a key carries, all parts together. */
    private static final int MAX_TRANSPORT_DATA = 4096;
    /** The most parts a key carries (one per transport). */
    private static final int MAX_PARTS = 16;
    private static final byte[] NONE = new byte[0];

    private final UUID ownerId;
    private final long keyId;
    private final long baseAddress;
    private final long length;
    /** Part data by transport name, in registration order. */
    private final Map<String, byte[]> parts;
    private final Set<Access> access;
    /** {@link Access#bits} of {@link #access}: checked on every operation, without the set's indirections. */
    private final int accessBits;
    /** What a transport derived from this key (a mapping, say), kept so it is not derived per operation. */
    private volatile Object transportCache;

    /**
     * @param ownerId the worker that registered the region
     * @param keyId the region's random key
     * @param baseAddress the region's first address
     * @param length the region's length in bytes
     * @param parts what each transport needs to reach the memory, by transport name (a transport
     *     that needs nothing has no part); at most 16 parts and 4096 bytes of data together, names of
     *     1 to 32 characters of {@code a-z 0-9 - _}
     * @throws IllegalArgumentException naming the part and the bound it breaks
     */
    public RemoteKey(UUID ownerId, long keyId, long baseAddress, long length, Map<String, byte[]> parts) {
        this(ownerId, keyId, baseAddress, length, Access.all(), parts);
    }

    /**
     * @param ownerId the worker that registered the region
     * @param keyId the region's random key
     * @param baseAddress the region's first address
     * @param length the region's length in bytes
     * @param access what peers may do to the region, at least one
     * @param parts what each transport needs to reach the memory, as in
     *     {@link #RemoteKey(UUID, long, long, long, Map)}
     * @throws IllegalArgumentException naming the part and the bound it breaks, or if access is empty
     */
    public RemoteKey(UUID ownerId, long keyId, long baseAddress, long length, Set<Access> access,
            Map<String, byte[]> parts) {
        if (access.isEmpty()) {
            throw new IllegalArgumentException("a remote key must permit some access (READ, WRITE, ATOMIC)");
        }
        this.access = Collections.unmodifiableSet(EnumSet.copyOf(access));
        this.accessBits = Access.bits(this.access);
        this.ownerId = Objects.requireNonNull(ownerId, "ownerId");
        this.keyId = keyId;
        this.baseAddress = baseAddress;
        this.length = length;
        String bad = checkParts(parts);
        if (bad != null) {
            throw new IllegalArgumentException("remote key parts: " + bad);
        }
        Map<String, byte[]> copy = new LinkedHashMap<>();
        parts.forEach((name, data) -> copy.put(name, data.clone()));
        this.parts = Collections.unmodifiableMap(copy);
    }

    /** @return why the parts cannot go into a key, or null if they can */
    private static String checkParts(Map<String, byte[]> parts) {
        if (parts.size() > MAX_PARTS) {
            return parts.size() + " parts, at most " + MAX_PARTS;
        }
        long total = 0;
        for (Map.Entry<String, byte[]> p : parts.entrySet()) {
            if (!validName(p.getKey())) {
                return "part name '" + p.getKey() + "' is not 1 to 32 characters of a-z 0-9 - _";
            }
            total += p.getValue().length;
        }
        return total > MAX_TRANSPORT_DATA ? total + " bytes of part data, at most " + MAX_TRANSPORT_DATA : null;
    }

    private static boolean validName(String name) {
        if (name == null || name.isEmpty() || name.length() > 32) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                return false;
            }
        }
        return true;
    }

    /**
     * For transports: what one derived from this key (for example the mapping of the region it
     * names), so that the fast path does not derive it on every operation. Any thread may read and
     * replace it; the last writer wins, so a transport must tag what it stores with itself.
     *
     * @return what was stored, or null
     */
    public Object transportCache() {
        return transportCache;
    }

    /**
     * @param value what a transport derived from this key, tagged with that transport
     * @see #transportCache()
     */
    public void transportCache(Object value) {
        this.transportCache = value;
    }

    /** @return the worker that owns the region */
    public UUID ownerId() {
        return ownerId;
    }

    /** @return the region's key */
    public long keyId() {
        return keyId;
    }

    /** @return the region's first address */
    public long baseAddress() {
        return baseAddress;
    }

    /** @return the region's length in bytes */
    public long length() {
        return length;
    }

    /**
     * @param transport a transport's name
     * @return a copy of that transport's part, or an empty array if it has none
     */
    public byte[] part(String transport) {
        byte[] p = parts.get(transport);
        return p == null ? NONE : p.clone();
    }

    /** @return what peers may do to the region */
    public Set<Access> access() {
        return access;
    }

    /**
     * @param a an access
     * @return whether the key permits it
     */
    public boolean permits(Access a) {
        return a != null && (accessBits & (1 << a.ordinal())) != 0;
    }

    /** @return the names of the transports that have a part, in registration order */
    public java.util.Set<String> partNames() {
        return parts.keySet();
    }

    /**
     * Checks that {@code [address, address + bytes)} lies inside the region.
     *
     * @param address first remote address
     * @param bytes number of bytes
     * @throws RemoteAccessException with reason {@code OUT_OF_BOUNDS}, naming range, region and key
     */
    public void checkBounds(long address, long bytes) {
        // Without overflow for a key built in this process, which may carry any base and length
        // (an unpacked key's are checked): the offset and the room left are compared only once
        // neither can have wrapped.
        long offset = address - baseAddress;
        if (bytes < 0 || length < 0 || bytes > length || address < baseAddress || offset < 0
                || offset > length - bytes) {
            throw new RemoteAccessException(RemoteAccessException.Reason.OUT_OF_BOUNDS,
                    String.format("address 0x%x + %d outside region [0x%x, 0x%x) of key %s",
                            address, bytes, baseAddress, baseAddress + length, shortKey()));
        }
    }

    /** @return the packed key */
    public byte[] toBytes() {
        int n = HEADER_BYTES;
        for (Map.Entry<String, byte[]> p : parts.entrySet()) {
            n += 1 + p.getKey().length() + 4 + p.getValue().length;
        }
        ByteBuffer out = ByteBuffer.allocate(n);
        out.putInt(MAGIC).put(VERSION)
                .putLong(ownerId.getMostSignificantBits()).putLong(ownerId.getLeastSignificantBits())
                .putLong(keyId).putLong(baseAddress).putLong(length)
                .put((byte) Access.bits(access)).put((byte) parts.size());
        for (Map.Entry<String, byte[]> p : parts.entrySet()) {
            out.put((byte) p.getKey().length()).put(p.getKey().getBytes(StandardCharsets.US_ASCII))
                    .putInt(p.getValue().length).put(p.getValue());
        }
        return out.array();
    }

    /**
     * @param bytes a packed key
     * @return the key
     * @throws RemoteAccessException with reason {@code MALFORMED_KEY} if the bytes are not a key
     */
    public static RemoteKey fromBytes(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            int magic = in.getInt();
            if (magic != MAGIC) {
                throw malformed(bytes, "bad magic 0x" + Integer.toHexString(magic));
            }
            byte version = in.get();
            if (version != VERSION) {
                throw malformed(bytes, "unsupported version " + version + " (this runtime reads " + VERSION + ")");
            }
            UUID owner = new UUID(in.getLong(), in.getLong());
            long key = in.getLong();
            long base = in.getLong();
            long len = in.getLong();
            if (len < 0) {
                throw malformed(bytes, "negative region length " + len);
            }
            if (base < 0) {
                throw malformed(bytes, String.format("negative base address 0x%x", base));
            }
            if (base > Long.MAX_VALUE - len) {
                throw malformed(bytes, String.format("region [0x%x, +%d) overflows the address space", base, len));
            }
            int bits = Byte.toUnsignedInt(in.get());
            Set<Access> access = Access.fromBits(bits);
            if (access == null || access.isEmpty()) {
                throw malformed(bytes, "access bits 0x" + Integer.toHexString(bits) + " (1 READ, 2 WRITE, 4 ATOMIC,"
                        + " at least one)");
            }
            int count = Byte.toUnsignedInt(in.get());
            if (count > MAX_PARTS) {
                throw malformed(bytes, count + " parts, at most " + MAX_PARTS);
            }
            Map<String, byte[]> parts = new LinkedHashMap<>();
            long total = 0;
            for (int i = 0; i < count; i++) {
                int nameLength = Byte.toUnsignedInt(in.get());
                byte[] name = new byte[nameLength];
                in.get(name);
                String partName = new String(name, StandardCharsets.US_ASCII);
                if (!validName(partName)) {
                    throw malformed(bytes, "part " + i + " has no valid name (1 to 32 characters of a-z 0-9 - _)");
                }
                int dlen = in.getInt();
                total += dlen;
                if (dlen < 0 || total > MAX_TRANSPORT_DATA) {
                    throw malformed(bytes, "part '" + partName + "' of " + dlen + " bytes: the parts' data would be"
                            + " outside [0, " + MAX_TRANSPORT_DATA + "] bytes");
                }
                byte[] data = new byte[dlen];
                in.get(data);
                if (parts.put(partName, data) != null) {
                    throw malformed(bytes, "two parts named '" + partName + "'");
                }
            }
            if (in.hasRemaining()) {
                throw malformed(bytes, in.remaining() + " trailing bytes");
            }
            return new RemoteKey(owner, key, base, len, access, parts);
        } catch (BufferUnderflowException e) {
            throw malformed(bytes, "truncated: " + bytes.length + " bytes, at least " + HEADER_BYTES + " expected");
        }
    }

    private static RemoteAccessException malformed(byte[] bytes, String why) {
        return new RemoteAccessException(RemoteAccessException.Reason.MALFORMED_KEY,
                "malformed remote key (" + bytes.length + " bytes): " + why);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemoteKey k && k.keyId == keyId && k.baseAddress == baseAddress
                && k.length == length && k.ownerId.equals(ownerId) && k.access.equals(access)
                && samePart(k.parts, parts);
    }

    private static boolean samePart(Map<String, byte[]> a, Map<String, byte[]> b) {
        if (!a.keySet().equals(b.keySet())) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : a.entrySet()) {
            if (!Arrays.equals(e.getValue(), b.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        // Not the id alone: keys a peer made up with one id and other ranges would share a bucket.
        return (Long.hashCode(keyId) * 31 + Long.hashCode(baseAddress)) * 31 + Long.hashCode(length);
    }

    /** Names the region but never prints the key in full. */
    @Override
    public String toString() {
        return String.format("RemoteKey[%s, [0x%x, 0x%x) of %s, %s]", shortKey(), baseAddress, baseAddress + length,
                ownerId, access);
    }

    /** @return the key's first four hex digits, enough to tell keys apart in a log without leaking them */
    public String shortKey() {
        return String.format("%04x..", keyId >>> 48);
    }
}
