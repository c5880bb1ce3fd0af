package dev.fenceline.transport.tcp;

import io.netty.channel.Channel;
import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * Incoming connections that have not authenticated yet, oldest first, at most a bound of them. A
 * new one over the bound pushes the oldest out: whoever opens connections and never finishes the
 * handshake can hold at most the bound, not every connection slot, and keeps a connection only until
 * the newer ones push it out, while a real peer's handshake takes milliseconds. Any thread.
 */
final class Handshaking {
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
        Iterator<Channel> oldest = waiting.iterator();
        Channel out = oldest.next();
        oldest.remove();
        return out;
    }

    /** @param ch a connection that authenticated, or closed */
    synchronized void done(Channel ch) {
        waiting.remove(ch);
    }

    /** @return the connections handshaking now */
    synchronized int size() {
        return waiting.size();
    }
}
