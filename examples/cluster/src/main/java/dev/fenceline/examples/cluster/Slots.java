package dev.fenceline.examples.cluster;

/**
 * The table's layout and the values written into it, as plain arithmetic. Every member's region
 * holds every key: slot {@code k} is 16 bytes at {@code 16 k}, a version (the number of writes
 * applied, counted by an atomic ADD) and then a value. A value says who wrote it, for which key,
 * and which of that writer's writes of the key it was (from 1), so a replica can be checked
 * against the writer's own count.
 */
final class Slots {
    /** Bytes per key. */
    static final int SLOT = 16;

    private Slots() {
    }

    /**
     * @param key a key
     * @return the offset of its version word in a table
     */
    static long versionOffset(int key) {
        return (long) SLOT * key;
    }

    /**
     * @param key a key
     * @return the offset of its value word in a table
     */
    static long valueOffset(int key) {
        return (long) SLOT * key + 8;
    }

    /**
     * @param key a key
     * @param nodes how many members there are
     * @return the index of the member that writes it (each key has one writer)
     */
    static int owner(int key, int nodes) {
        return key % nodes;
    }

    /**
     * @param writer the writing member's index, below 65536
     * @param key the key, below 65536
     * @param write which of the writer's writes of the key, from 1
     * @return the value
     */
    static long value(int writer, int key, long write) {
        if (writer < 0 || writer > 0xFFFF || key < 0 || key > 0xFFFF || write < 1 || write > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("writer " + writer + ", key " + key + ", write " + write);
        }
        return ((long) writer << 48) | ((long) key << 32) | write;
    }

    /** @return the writer a value names */
    static int writer(long value) {
        return (int) (value >>> 48);
    }

    /** @return the key a value names */
    static int key(long value) {
        return (int) ((value >>> 32) & 0xFFFF);
    }

    /** @return the write a value is, from 1 (0 for an empty slot) */
    static long write(long value) {
        return value & 0xFFFF_FFFFL;
    }

    /**
     * A survivor's key at a surviving replica: every write was acknowledged, so the replica must
     * hold exactly that many and the last one.
     *
     * @param key the key
     * @param writer its writer
     * @param acknowledged the writes the writer saw acknowledged by this replica
     * @param version the replica's version word
     * @param value the replica's value word
     * @return null if it holds, else what is wrong
     */
    static String checkAcknowledged(int key, int writer, long acknowledged, long version, long value) {
        if (version != acknowledged) {
            return "key " + key + ": version " + version + ", but " + acknowledged + " writes were acknowledged ("
                    + (version > acknowledged ? "applied twice" : "lost") + ")";
        }
        long expected = acknowledged == 0 ? 0 : value(writer, key, acknowledged);
        if (value != expected) {
            return "key " + key + ": value " + describe(value) + ", expected " + describe(expected);
        }
        return null;
    }

    /**
     * A key of a member that died mid-write, at a surviving replica: each write is a put, a fence,
     * an ADD and a fence, so the value is the write the version counts or the one after it (whose
     * put landed before the writer died), from that writer, for that key.
     *
     * @param key the key
     * @param writer its (dead) writer
     * @param version the replica's version word
     * @param value the replica's value word
     * @return null if it holds, else what is wrong
     */
    static String checkInterrupted(int key, int writer, long version, long value) {
        if (value == 0) {
            return version == 0 ? null : "key " + key + ": version " + version + " without a value (an ADD applied"
                    + " before its fenced put, or twice)";
        }
        if (writer(value) != writer || key(value) != key) {
            return "key " + key + ": value " + describe(value) + " was not written by member " + writer + " for it";
        }
        long w = write(value);
        if (w != version && w != version + 1) {
            return "key " + key + ": value is write " + w + " but version " + version + " ("
                    + (w < version ? "an ADD applied twice or before its put" : "a fenced ADD was lost") + ")";
        }
        return null;
    }

    static String describe(long value) {
        return value == 0 ? "empty" : "write " + write(value) + " of key " + key(value) + " by member " + writer(value);
    }
}
