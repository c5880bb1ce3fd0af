package dev.fenceline.transport.tcp;

import io.netty.channel.Channel;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Incoming connections that have not authenticated yet, at most a bound of them. A new one over the
 * bound pushes out the oldest of the address that has the most of them handshaking (the oldest
 * overall among equals): whoever opens connections and never finishes the handshake can hold at most
 * the bound, not every connection slot, and pushes out its own connections before anyone else's, so
 * a flood from one address does not cut short the handshakes of peers elsewhere, whose handshakes
 * take a few round trips. Any thread.
 */
final class Handshaking {
    /** Set, under this object's lock, on a connection pushed out: it must not be welcomed after. */
    private static final io.netty.util.AttributeKey<Boolean> PUSHED_OUT =
            io.netty.util.AttributeKey.valueOf(Handshaking.class, "pushedOut");

    private final int most;
    /** Per address, its connections handshaking, oldest first, each with when it came (a count). */
    private final Map<Object, LinkedHashMap<Channel, Long>> byAddress = new HashMap<>();
    private final Map<Channel, Object> addressOf = new HashMap<>();
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
        if (addressOf.putIfAbsent(ch, from) == null) {
            byAddress.computeIfAbsent(from, a -> new LinkedHashMap<>()).put(ch, admitted++);
        }
        return addressOf.size() <= most ? null : pushOut();
    }

    /**
     * @return the connection that gives way (the oldest of the address with the most handshaking),
     *     no longer counted here, or null if none
     */
    synchronized Channel pushOut() {
        Map.Entry<Channel, Long> out = null;
        int outOf = 0;
        for (LinkedHashMap<Channel, Long> of : byAddress.values()) {
            Map.Entry<Channel, Long> first = of.entrySet().iterator().next();
            if (of.size() > outOf || of.size() == outOf && first.getValue() < out.getValue()) {
                out = first;
                outOf = of.size();
            }
        }
        if (out == null) {
            return null;
        }
        Channel ch = out.getKey();
        forget(ch);
        ch.attr(PUSHED_OUT).set(Boolean.TRUE);
        return ch;
    }

    private void forget(Channel ch) {
        Object from = addressOf.remove(ch);
        if (from != null) {
            LinkedHashMap<Channel, Long> of = byAddress.get(from);
            of.remove(ch);
            if (of.isEmpty()) {
                byAddress.remove(from);
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
        return addressOf.size();
    }
}
