package dev.fenceline.transport.ucx;

import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warnings any sender can provoke at will (a malformed wireup message, a refused connect): logged the
 * first time and at every power of two after, with the count, so that a flood of them costs a few
 * lines rather than one each. The target's dropped requests are counted the same way. Agent thread.
 */
final class UcxPeerWarnings {
    private static final Logger LOG = LoggerFactory.getLogger(UcxPeerWarnings.class);

    private final String workerName;
    private long count;

    /** @param workerName the worker's name, for the log */
    UcxPeerWarnings(String workerName) {
        this.workerName = workerName;
    }

    /** @param what the warning, made only when it is logged */
    void warn(Supplier<String> what) {
        long n = ++count;
        if (Long.bitCount(n) == 1) {
            LOG.warn("ucx {}: {} ({} such warning(s) so far: logged at the first and every power of two)",
                    workerName, what.get(), n);
        }
    }

    /** @return how many were counted */
    long count() {
        return count;
    }
}
