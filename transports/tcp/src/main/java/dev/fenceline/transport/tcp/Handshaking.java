package dev.fenceline.transport.tcp;

import io.netty.channel.Channel;
import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * Incoming connections that have not authenticated yet, oldest first, at most a bound of them. A
 * new one over the bound pushes the oldest out: whoever opens connections and never finishes the
 * handshake can hold at most the bound, not every connection slot, and keeps a connection only until
 * the newer ones push it out, while a real peer's handshake takes a few round trips. Any thread.
 */
final class Handshaking {
    /** Set, under this object's lock, on a connection pushed out: it must not be welcomed after. */
    private static final io.netty.util.AttributeKey<Boolean> PUSHED_OUT =
            io.netty.util.AttributeKey.valueOf(Handshaking.class, "pushedOut");

    private final int most;
    private final LinkedHashSet<Channel> waiting = new LinkedHashSet<>();

    /** @param most the most connections handshaking at once */
    Handshaking(int most) {
        this.most = most;
    }

    /**
     * @param ch a connection just accepted
     * @return the oldest connection still handshaking, no longer counted here, if the new one took
     *     its place (the caller closes it); else null
     */
    synchronized Channel admit(Channel ch) {
        waiting.add(ch);
        if (waiting.size() <= most) {
            return null;
        }
        return oldest();
    }

    /** @return the connection that has handshaken longest, no longer counted here, or null if none */
    synchronized Channel oldest() {
        Iterator<Channel> oldest = waiting.iterator();
        if (!oldest.hasNext()) {
            return null;
        }
        Channel out = oldest.next();
        oldest.remove();
        out.attr(PUSHED_OUT).set(Boolean.TRUE);
        return out;
    }

    /**
     * @param ch a connection that authenticated, or closed
     * @return false if it was pushed out (it is being closed): it must not be welcomed
     */
    synchronized boolean done(Channel ch) {
        waiting.remove(ch);
        return !Boolean.TRUE.equals(ch.attr(PUSHED_OUT).get());
    }

    /** @return the connections handshaking now */
    synchronized int size() {
        return waiting.size();
    }
}
