package dev.fenceline;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Everything a peer needs to connect to a worker: its identity and, for every transport the worker
 * offers, that transport's address. Serializable with {@link #toBytes()} so it can travel through
 * any out-of-band channel (a file, a cluster membership event, an active message).
 */
public final class WorkerAddress {
    private static final int MAGIC = 0x464C5741; // "FLWA"
    private static final byte VERSION = 1;
    /** The longest worker name an address carries, in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = 1024;
    private static final int MAX_TRANSPORTS = 64;
    private static final int MAX_BLOB_BYTES = 1 << 16;
    /** A transport's name is written after one length byte. */
    private static final int MAX_TRANSPORT_NAME_BYTES = 255;

    private final UUID workerId;
    private final String name;
    private final Map<String, byte[]> transports;

    /**
     * @param workerId the worker's unique identity
     * @param name the worker's human-readable name
     * @param transports transport name to that transport's address, in order of preference
     * @throws IllegalArgumentException if the name has more than {@value #MAX_NAME_BYTES} UTF-8
     *     bytes, or there are more than 64 transports, a transport's name is empty or has more than
     *     255 UTF-8 bytes, or its address more than 65,536 bytes: no peer would read such an address
     */
    public WorkerAddress(UUID workerId, String name, Map<String, byte[]> transports) {
        this.workerId = Objects.requireNonNull(workerId, "workerId");
        this.name = Objects.requireNonNull(name, "name");
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (nameBytes > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("a worker name has at most " + MAX_NAME_BYTES + " UTF-8 bytes, not "
                    + nameBytes);
        }
        if (transports.size() > MAX_TRANSPORTS) {
            throw new IllegalArgumentException("a worker address has at most " + MAX_TRANSPORTS + " transports, not "
                    + transports.size());
        }
        LinkedHashMap<String, byte[]> copy = new LinkedHashMap<>();
        transports.forEach((k, v) -> {
            int keyBytes = k.getBytes(StandardCharsets.UTF_8).length;
            if (keyBytes < 1 || keyBytes > MAX_TRANSPORT_NAME_BYTES) {
                throw new IllegalArgumentException("transport name '" + k + "' has " + keyBytes
                        + " UTF-8 bytes, outside [1, " + MAX_TRANSPORT_NAME_BYTES + "]");
            }
            if (v.length > MAX_BLOB_BYTES) {
                throw new IllegalArgumentException("transport '" + k + "''s address has " + v.length
                        + " bytes, more than " + MAX_BLOB_BYTES);
            }
            copy.put(k, v.clone());
        });
        this.transports = Collections.unmodifiableMap(copy);
    }

    /** @return the worker's unique identity */
    public UUID workerId() {
        return workerId;
    }

    /** @return the worker's name */
    public String name() {
        return name;
    }

    /** @return the names of the transports this worker offers, in order of preference */
    public java.util.Set<String> transports() {
        return transports.keySet();
    }

    /**
     * @param transport a transport name
     * @return a copy of that transport's address blob, or {@code null} if the worker does not offer it
     */
    public byte[] transportAddress(String transport) {
        byte[] b = transports.get(transport);
        return b == null ? null : b.clone();
    }

    /** @return the serialized address */
    public byte[] toBytes() {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        int size = 4 + 1 + 16 + 2 + nameBytes.length + 1;
        for (Map.Entry<String, byte[]> e : transports.entrySet()) {
            size += 1 + e.getKey().getBytes(StandardCharsets.UTF_8).length + 4 + e.getValue().length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        out.putInt(MAGIC).put(VERSION);
        out.putLong(workerId.getMostSignificantBits()).putLong(workerId.getLeastSignificantBits());
        out.putShort((short) nameBytes.length).put(nameBytes);
        out.put((byte) transports.size());
        for (Map.Entry<String, byte[]> e : transports.entrySet()) {
            byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
            out.put((byte) k.length).put(k).putInt(e.getValue().length).put(e.getValue());
        }
        return out.array();
    }

    /**
     * @param bytes a serialized address from {@link #toBytes()}
     * @return the address
     * @throws FencelineException if the bytes are not a valid address (the message says where)
     */
    public static WorkerAddress fromBytes(byte[] bytes) {
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
            UUID id = new UUID(in.getLong(), in.getLong());
            int nameLen = Short.toUnsignedInt(in.getShort());
            if (nameLen > MAX_NAME_BYTES) {
                throw malformed(bytes, "name of " + nameLen + " bytes exceeds " + MAX_NAME_BYTES);
            }
            byte[] nameBytes = new byte[nameLen];
            in.get(nameBytes);
            int count = Byte.toUnsignedInt(in.get());
            if (count > MAX_TRANSPORTS) {
                throw malformed(bytes, count + " transports exceed " + MAX_TRANSPORTS);
            }
            LinkedHashMap<String, byte[]> transports = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                byte[] k = new byte[Byte.toUnsignedInt(in.get())];
                in.get(k);
                int len = in.getInt();
                if (len < 0 || len > MAX_BLOB_BYTES) {
                    throw malformed(bytes, "transport address of " + len + " bytes outside [0, " + MAX_BLOB_BYTES + "]");
                }
                byte[] v = new byte[len];
                in.get(v);
                if (transports.put(new String(k, StandardCharsets.UTF_8), v) != null) {
                    throw malformed(bytes, "transport '" + new String(k, StandardCharsets.UTF_8) + "' named twice");
                }
            }
            if (in.hasRemaining()) {
                throw malformed(bytes, in.remaining() + " trailing bytes");
            }
            return new WorkerAddress(id, new String(nameBytes, StandardCharsets.UTF_8), transports);
        } catch (IllegalArgumentException e) { // what the constructor refuses: a name of invalid UTF-8 whose
            // replacements grew past the bound, an empty transport name
            throw malformed(bytes, e.getMessage());
        } catch (BufferUnderflowException e) {
            throw malformed(bytes, "truncated at byte " + in.position());
        }
    }

    private static FencelineException malformed(byte[] bytes, String why) {
        return new FencelineException("malformed worker address (" + bytes.length + " bytes): " + why);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof WorkerAddress other)) {
            return false;
        }
        if (!workerId.equals(other.workerId) || !name.equals(other.name)
                || !transports.keySet().equals(other.transports.keySet())) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : transports.entrySet()) {
            if (!Arrays.equals(e.getValue(), other.transports.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return workerId.hashCode();
    }

    @Override
    public String toString() {
        return "WorkerAddress[" + name + "/" + workerId + " via " + transports.keySet() + "]";
    }
}
