package dev.fenceline;

import java.util.EnumSet;
import java.util.Set;

/**
 * What peers may do to a registered region, fixed when it is registered
 * ({@link Worker#register(java.nio.ByteBuffer, Set)}, {@link Worker#allocate(long, Set)}) and carried in
 * its {@link RemoteKey}. The origin refuses an operation its key does not permit; the target checks
 * what it registered, not what a key claims, so a key forged with more access is refused there too.
 * Refusals are {@link RemoteAccessException} with reason {@code ACCESS_DENIED}.
 */
public enum Access {
    /** Gets. */
    READ,
    /** Puts. */
    WRITE,
    /** Atomics, compare-and-swap included. */
    ATOMIC;

    /** @return every access: what {@link Worker#register(java.nio.ByteBuffer)} grants */
    public static Set<Access> all() {
        return EnumSet.allOf(Access.class);
    }

    /**
     * @param access a set of access
     * @return its wire form: bit 0 READ, bit 1 WRITE, bit 2 ATOMIC
     */
    public static int bits(Set<Access> access) {
        int b = 0;
        for (Access a : access) {
            b |= 1 << a.ordinal();
        }
        return b;
    }

    /**
     * @param bits a wire form from {@link #bits}
     * @return the set, or null if {@code bits} has bits that are no access
     */
    public static Set<Access> fromBits(int bits) {
        if ((bits & ~7) != 0) {
            return null;
        }
        Set<Access> s = EnumSet.noneOf(Access.class);
        for (Access a : values()) {
            if ((bits & (1 << a.ordinal())) != 0) {
                s.add(a);
            }
        }
        return s;
    }
}
