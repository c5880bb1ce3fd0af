package dev.fenceline.spi.support;

import dev.fenceline.spi.Wakeup;
import org.agrona.concurrent.IdleStrategy;

/**
 * Idles a progress agent that has a {@link Wakeup}: a short spin, then yields, then waits on the
 * backend's event (bounded by {@code maxWaitNanos}, so a missed event costs at most that), and back
 * to spinning as soon as the agent does work. Unlike a backoff strategy's park, the wait ends when
 * the event comes rather than when a guessed time has passed.
 */
public final class WakeupIdleStrategy implements IdleStrategy {
    private static final int SPINS = 100;
    private static final int YIELDS = 10;

    private final Wakeup wakeup;
    private final long maxWaitNanos;
    private final java.util.function.BooleanSupplier closing;
    private int idleTurns;

    /**
     * @param wakeup the backend's event
     * @param maxWaitNanos the longest single wait
     */
    public WakeupIdleStrategy(Wakeup wakeup, long maxWaitNanos) {
        this(wakeup, maxWaitNanos, () -> false);
    }

    /**
     * @param wakeup the backend's event
     * @param maxWaitNanos the longest single wait
     * @param closing true once the agent's runner is closing: then it yields instead of waiting, so
     *     that the close is seen at once
     */
    WakeupIdleStrategy(Wakeup wakeup, long maxWaitNanos, java.util.function.BooleanSupplier closing) {
        if (maxWaitNanos <= 0) {
            throw new IllegalArgumentException("the longest wait must be positive: " + maxWaitNanos + " ns");
        }
        this.wakeup = wakeup;
        this.maxWaitNanos = maxWaitNanos;
        this.closing = closing;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            idleTurns = 0;
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        int turn = idleTurns++;
        if (turn < SPINS) {
            Thread.onSpinWait();
        } else if (turn < SPINS + YIELDS || closing.getAsBoolean()) {
            Thread.yield();
        } else {
            wakeup.await(maxWaitNanos);
        }
    }

    @Override
    public void reset() {
        idleTurns = 0;
    }

    @Override
    public String alias() {
        return "wakeup";
    }
}
