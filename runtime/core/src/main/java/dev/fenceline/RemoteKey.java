package dev.fenceline;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * The capability a peer needs to access a registered {@link MemoryRegion}: the owner's identity,
 * an unguessable 64-bit key, the region's address range, and transport-specific data. Pack it with
 * {@link #toBytes()}, send it to the peer by any means, and unpack it there with
 * {@link Worker#unpackRemoteKey(byte[])}.
 */
public final class RemoteKey {
    private static final int MAGIC = 0x464C524B; // "FLRK"
    private static final byte VERSION = 1;
    private static final int HEADER_BYTES = 4 + 1 + 16 + 8 + 8 + 8 + 4;
    private static final int MAX_TRANSPORT_DATA = 4096;

    private final UUID ownerId;
    private final long keyId;
    private final long baseAddress;
    private final long length;
    private final byte[] transportData;
    /** What a transport derived from this key (a mapping, say), kept so it is not derived per operation. */
    private volatile Object transportCache;

    /**
     * @param ownerId the worker that registered the region
     * @param keyId the region's random key
     * @param baseAddress the region's first address
     * @param length the region's length in bytes
     * @param transportData what a transport needs to reach the memory (may be empty)
     */
    public RemoteKey(UUID ownerId, long keyId, long baseAddress, long length, byte[] transportData) {
        this.ownerId = Objects.requireNonNull(ownerId, "ownerId");
        this.keyId = keyId;
        this.baseAddress = baseAddress;
        this.length = length;
        this.transportData = transportData.clone();
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

    /** @return a copy of the transport-specific data */
    public byte[] transportData() {
        return transportData.clone();
    }

    /**
     * Checks that {@code [address, address + bytes)} lies inside the region.
     *
     * @param address first remote address
     * @param bytes number of bytes
     * @throws RemoteAccessException with reason {@code OUT_OF_BOUNDS}, naming range, region and key
     */
    public void checkBounds(long address, long bytes) {
        if (bytes < 0 || address < baseAddress || address - baseAddress > length - bytes) {
            throw new RemoteAccessException(RemoteAccessException.Reason.OUT_OF_BOUNDS,
                    String.format("address 0x%x + %d outside region [0x%x, 0x%x) of key %s",
                            address, bytes, baseAddress, baseAddress + length, shortKey()));
        }
    }

    /** @return the packed key */
    public byte[] toBytes() {
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + transportData.length);
        out.putInt(MAGIC).put(VERSION)
                .putLong(ownerId.getMostSignificantBits()).putLong(ownerId.getLeastSignificantBits())
                .putLong(keyId).putLong(baseAddress).putLong(length)
                .putInt(transportData.length).put(transportData);
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
                throw malformed(bytes, "unsupported version " + version);
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
            int tlen = in.getInt();
            if (tlen < 0 || tlen > MAX_TRANSPORT_DATA) {
                throw malformed(bytes, "transport data of " + tlen + " bytes outside [0, " + MAX_TRANSPORT_DATA + "]");
            }
            byte[] tdata = new byte[tlen];
            in.get(tdata);
            if (in.hasRemaining()) {
                throw malformed(bytes, in.remaining() + " trailing bytes");
            }
            return new RemoteKey(owner, key, base, len, tdata);
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
                && k.length == length && k.ownerId.equals(ownerId) && Arrays.equals(k.transportData, transportData);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(keyId);
    }

    /** Names the region but never prints the key in full. */
    @Override
    public String toString() {
        return String.format("RemoteKey[%s, [0x%x, 0x%x) of %s]", shortKey(), baseAddress, baseAddress + length, ownerId);
    }

    /** @return the key's first four hex digits, enough to tell keys apart in a log without leaking them */
    public String shortKey() {
        return String.format("%04x..", keyId >>> 48);
    }
}
