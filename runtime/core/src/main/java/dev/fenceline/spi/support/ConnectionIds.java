package dev.fenceline.spi.support;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Issues {@link dev.fenceline.spi.LaneConnection#id()}s: one counter for every transport in the JVM, so two
 * connections never share an id, whichever transports made them.
 */
public final class ConnectionIds {
    private static final AtomicLong NEXT = new AtomicLong();

    private ConnectionIds() {
    }

    /** @return a connection id never issued before in this JVM */
    public static long next() {
        return NEXT.incrementAndGet();
    }
}
