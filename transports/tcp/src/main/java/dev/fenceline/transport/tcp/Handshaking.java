package dev.fenceline.transport.tcp;

import io.netty.channel.Channel;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Incoming connections that have not authenticated yet, at most a bound of them. A new one over the
 * bound pushes out the oldest of the address that has the most of them handshaking (the oldest
 * overall among equals): whoever opens connections and never finishes the handshake can hold at most
 * the bound, not every connection slot, and from one address pushes out its own connections before
 * a handshake of an address with fewer, whose handshake takes a few round trips. Addresses are
 * compared whole (no prefix is grouped). Any thread; a push-out costs a logarithm of the addresses.
 */
final class Handshaking {
    /** Set, under this object's lock, on a connection pushed out: it must not be welcomed after. */
    private static final io.netty.util.AttributeKey<Boolean> PUSHED_OUT =
            io.netty.util.AttributeKey.valueOf(Handshaking.class, "pushedOut");

    /** One address's connections handshaking, oldest first, each with when it came (a count). */
    private static final class Bucket {
        final Object address;
        final LinkedHashMap<Channel, Long> channels = new LinkedHashMap<>();

        Bucket(Object address) {
            this.address = address;
        }

        long oldest() {
            return channels.values().iterator().next();
        }
    }

    /** The most connections first, then the oldest first: the first gives way. */
    private static final Comparator<Bucket> GIVES_WAY_FIRST = Comparator
            .comparingInt((Bucket b) -> -b.channels.size()).thenComparingLong(Bucket::oldest);

    private final int most;
    private final Map<Object, Bucket> byAddress = new HashMap<>();
    /** Every non-empty bucket, ordered by {@link #GIVES_WAY_FIRST}; a bucket changes only while out of it. */
    private final TreeSet<Bucket> order = new TreeSet<>(GIVES_WAY_FIRST);
    private final Map<Channel, Bucket> bucketOf = new HashMap<>();
    private long admitted;

    /** @param most the most connections handshaking at once */
    Handshaking(int most) {
        this.most = most;
    }

    /**
     * @param ch a connection just accepted
     * @param from its peer's address
     * @return a connection no longer counted here, if the new one took its place (the caller closes
     *     it); else null
     */
    synchronized Channel admit(Channel ch, Object from) {
        if (!bucketOf.containsKey(ch)) {
            Bucket b = byAddress.computeIfAbsent(from, Bucket::new);
            if (!b.channels.isEmpty()) {
                order.remove(b);
            }
            b.channels.put(ch, admitted++);
            order.add(b);
            bucketOf.put(ch, b);
        }
        return bucketOf.size() <= most ? null : pushOut();
    }

    /**
     * @return the connection that gives way (the oldest of the address with the most handshaking),
     *     no longer counted here, or null if none
     */
    synchronized Channel pushOut() {
        if (order.isEmpty()) {
            return null;
        }
        Channel ch = order.first().channels.keySet().iterator().next();
        forget(ch);
        ch.attr(PUSHED_OUT).set(Boolean.TRUE);
        return ch;
    }

    private void forget(Channel ch) {
        Bucket b = bucketOf.remove(ch);
        if (b != null) {
            order.remove(b);
            b.channels.remove(ch);
            if (b.channels.isEmpty()) {
                byAddress.remove(b.address);
            } else {
                order.add(b);
            }
        }
    }

    /**
     * @param ch a connection that authenticated, or closed
     * @return false if it was pushed out (it is being closed): it must not be welcomed
     */
    synchronized boolean done(Channel ch) {
        forget(ch);
        return !Boolean.TRUE.equals(ch.attr(PUSHED_OUT).get());
    }

    /** @return the connections handshaking now */
    synchronized int size() {
        return bucketOf.size();
    }
}
