package dev.fenceline.actor;

import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.Revocation;
import org.agrona.collections.Long2ObjectHashMap;
import org.slf4j.LoggerFactory;

/**
 * What each connection an endpoint gave up said of its copies ({@link LaneConnection#revoke()}),
 * asked once per connection. Owned by the endpoint actor.
 */
final class Revocations {
    /** Null until a connection is given up: most endpoints never give one up. */
    private Long2ObjectHashMap<Revocation> byConnection;

    /**
     * Asks a given-up connection (closed or aborted already) what became of its copies, once.
     *
     * @param c the connection
     */
    void revoke(LaneConnection c) {
        if (byConnection == null) {
            byConnection = new Long2ObjectHashMap<>();
        } else if (byConnection.containsKey(c.id())) {
            return;
        }
        Revocation r;
        try {
            r = c.revoke();
        } catch (RuntimeException e) { // a transport's bug must not make the endpoint say "not applied"
            LoggerFactory.getLogger(Revocations.class).warn("{} could not say what became of its operations: {}",
                    c, e.toString());
            r = Revocation.MAY_STILL_APPLY;
        }
        byConnection.put(c.id(), r == null ? Revocation.MAY_STILL_APPLY : r);
    }

    /**
     * @param connectionId a connection
     * @param token one of its operations
     * @return what it said of that operation; {@link Revocation.Fate#MAY_STILL_APPLY} for a connection
     *     that was never asked (the safe answer)
     */
    Revocation.Fate fate(long connectionId, long token) {
        Revocation r = byConnection == null ? null : byConnection.get(connectionId);
        Revocation.Fate f = r == null ? null : r.fate(token);
        return f == null ? Revocation.Fate.MAY_STILL_APPLY : f;
    }
}
