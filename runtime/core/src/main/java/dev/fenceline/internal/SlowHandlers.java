package dev.fenceline.internal;

import dev.fenceline.jfr.SlowHandlerEvent;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices active-message handlers that run longer than a bound: each such call is a JFR event, and
 * the first one per handler id is logged, so that a slow handler is visible without flooding the
 * log. A handler runs on a transport's receiving thread, so while it runs that thread serves no one.
 */
final class SlowHandlers {
    private static final Logger LOG = LoggerFactory.getLogger(SlowHandlers.class);

    private final String worker;
    private final AtomicLongArray logged = new AtomicLongArray((RegistrationTable.MAX_AM_ID + 64) / 64);
    private volatile long boundNanos;

    SlowHandlers(String worker) {
        this.worker = worker;
    }

    /** @param nanos the bound, 0 for none */
    void bound(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("handler time bound " + nanos + " ns is negative");
        }
        boundNanos = nanos;
    }

    /** @return when the call starts, for {@link #finished}; 0 when there is no bound */
    long start() {
        return boundNanos == 0 ? 0 : System.nanoTime();
    }

    /**
     * @param id the handler's active-message id
     * @param started what {@link #start()} returned
     */
    void finished(int id, long started) {
        long bound = boundNanos;
        if (started == 0 || bound == 0) {
            return;
        }
        long took = System.nanoTime() - started;
        if (took <= bound) {
            return;
        }
        SlowHandlerEvent e = new SlowHandlerEvent();
        if (e.isEnabled()) {
            e.worker = worker;
            e.id = id;
            e.took = took;
            e.bound = bound;
            e.commit();
        }
        if (firstTime(id)) {
            LOG.warn("active-message handler {} at worker '{}' ran {} ms, over its bound of {} ms;"
                    + " it holds a transport's receiving thread while it runs (logged once per handler id)",
                    id, worker, took / 1_000_000, bound / 1_000_000);
        }
    }

    private boolean firstTime(int id) {
        int word = id >>> 6;
        long bit = 1L << (id & 63);
        long was;
        do {
            was = logged.get(word);
            if ((was & bit) != 0) {
                return false;
            }
        } while (!logged.compareAndSet(word, was, was | bit));
        return true;
    }
}
