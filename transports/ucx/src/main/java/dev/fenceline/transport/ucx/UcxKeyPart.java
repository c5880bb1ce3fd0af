package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The ucx transport's part of a region's remote key: the region's slot in its owner's key table
 * (which peers on the owner's host check before they reach the region without the owner) and one
 * packed UCT remote key per memory domain that reaches the region, by component name, like UCP's
 * packed rkey with a part per memory domain. A component with an empty key (cma, tcp) reaches the
 * memory by address alone. Decoding is strict: every length bounded, names of the expected alphabet,
 * no trailing bytes.
 *
 * @param slot the region's key-table slot, or {@link #NO_SLOT} where its owner keeps no table
 * @param rkeys packed UCT remote keys by component
 */
record UcxKeyPart(int slot, Map<String, byte[]> rkeys) {
    private static final byte VERSION = 1;
    /** No key-table slot: the owner has no shared-memory transport to keep one in. */
    static final int NO_SLOT = -1;
    /** More memory domains than a worker opens. */
    static final int MAX_RKEYS = 16;
    /** A packed UCT key longer than this is not one (UCT's own are tens of bytes). */
    static final int MAX_RKEY = 1024;

    /** Checks the fields, copies the keys. */
    UcxKeyPart {
        if (slot < NO_SLOT) {
            throw new IllegalArgumentException("key-table slot " + slot);
        }
        if (rkeys.size() > MAX_RKEYS) {
            throw new IllegalArgumentException(rkeys.size() + " remote keys, at most " + MAX_RKEYS);
        }
        Map<String, byte[]> copy = new LinkedHashMap<>();
        rkeys.forEach((name, key) -> {
            if (!name.matches("[a-z0-9_]{1,32}") || key.length > MAX_RKEY) {
                throw new IllegalArgumentException("a remote key of component '" + name + "', " + key.length + " bytes");
            }
            copy.put(name, key.clone());
        });
        rkeys = java.util.Collections.unmodifiableMap(copy);
    }

    /**
     * @param component a UCT component's name
     * @return its packed key, or null if none of this region's memory domains is of that component
     */
    byte[] rkey(String component) {
        byte[] k = rkeys.get(component);
        return k == null ? null : k.clone();
    }

    /**
     * @return a digest of the packed UCT keys (their domains and bytes, in order): the owner writes it
     *     into the region's key-table slot, and a peer checks that the keys it is about to use are the
     *     ones the owner packed
     */
    long digest() {
        return digestOf(rkeys);
    }

    static long digestOf(Map<String, byte[]> rkeys) {
        java.security.MessageDigest md;
        try {
            md = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // a mandatory JDK algorithm
        }
        for (Map.Entry<String, byte[]> e : rkeys.entrySet()) {
            md.update(e.getKey().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            md.update((byte) 0);
            md.update(ByteBuffer.allocate(4).putInt(e.getValue().length).array());
            md.update(e.getValue());
        }
        return ByteBuffer.wrap(md.digest()).getLong();
    }

    /** @return whether the component reaches the region */
    boolean reaches(String component) {
        return rkeys.containsKey(component);
    }

    byte[] encode() {
        int n = 1 + 4 + 1;
        for (Map.Entry<String, byte[]> e : rkeys.entrySet()) {
            n += 1 + e.getKey().length() + 2 + e.getValue().length;
        }
        ByteBuffer out = ByteBuffer.allocate(n).put(VERSION).putInt(slot).put((byte) rkeys.size());
        rkeys.forEach((name, key) -> out.put((byte) name.length()).put(name.getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                .putShort((short) key.length).put(key));
        return out.array();
    }

    /**
     * @param part the bytes of a key's ucx part, as a peer sent them
     * @return the part
     * @throws FencelineException naming what is wrong, for anything malformed
     */
    static UcxKeyPart decode(byte[] part) {
        ByteBuffer in = ByteBuffer.wrap(part);
        try {
            if (in.get() != VERSION) {
                throw new FencelineException("ucx: a remote key part of an unknown version");
            }
            int slot = in.getInt();
            int count = Byte.toUnsignedInt(in.get());
            if (count > MAX_RKEYS) {
                throw new FencelineException("ucx: a remote key part with " + count + " UCT keys, at most " + MAX_RKEYS);
            }
            Map<String, byte[]> rkeys = new LinkedHashMap<>();
            for (int k = 0; k < count; k++) {
                byte[] name = new byte[Byte.toUnsignedInt(in.get())];
                in.get(name);
                int n = Short.toUnsignedInt(in.getShort());
                if (n > MAX_RKEY) {
                    throw new FencelineException("ucx: a packed UCT key of " + n + " bytes, at most " + MAX_RKEY);
                }
                byte[] key = new byte[n];
                in.get(key);
                String s = new String(name, java.nio.charset.StandardCharsets.US_ASCII);
                if (!s.matches("[a-z0-9_]{1,32}") || rkeys.put(s, key) != null) {
                    throw new FencelineException("ucx: a remote key part naming component '" + printable(s)
                            + "' (a-z, 0-9 and _, once each)");
                }
            }
            if (in.hasRemaining()) {
                throw new FencelineException("ucx: a remote key part with " + in.remaining() + " bytes after its end");
            }
            if (slot < NO_SLOT) {
                throw new FencelineException("ucx: a remote key part naming key-table slot " + slot);
            }
            return new UcxKeyPart(slot, rkeys);
        } catch (BufferUnderflowException e) {
            throw new FencelineException("ucx: a truncated remote key part (" + part.length + " bytes)");
        }
    }

    private static String printable(String s) {
        String cut = s.length() > 32 ? s.substring(0, 32) + "..." : s;
        return cut.replaceAll("[^\\x20-\\x7E]", "?");
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof UcxKeyPart p) || p.slot != slot || !p.rkeys.keySet().equals(rkeys.keySet())) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : rkeys.entrySet()) {
            if (!Arrays.equals(e.getValue(), p.rkeys.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = slot;
        for (Map.Entry<String, byte[]> e : rkeys.entrySet()) {
            h = h * 31 + e.getKey().hashCode() * 17 + Arrays.hashCode(e.getValue());
        }
        return h;
    }
}
