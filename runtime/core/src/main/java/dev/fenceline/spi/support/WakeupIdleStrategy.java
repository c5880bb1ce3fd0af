package dev.fenceline.spi.support;

import dev.fenceline.spi.Wakeup;
import org.agrona.concurrent.IdleStrategy;

/**
 * Idles a progress agent that has a {@link Wakeup}: spins as many passes as the wake-up says
 * ({@link Wakeup#spinsBeforeWait}), yields, then waits on the backend's event (bounded by
 * {@code maxWaitNanos}, or by the wake-up's own bound ({@link Wakeup#maxWaitNanos}), so a missed event
 * costs at most that), and back to polling as soon as the agent does work. Unlike a backoff
 * strategy's park, the wait ends when the event comes rather than when a guessed time has passed.
 *
 * <p>Spinning pays only where a pass is cheap: an agent whose every pass is a system call (UCT's tcp
 * polls its sockets) and that spins takes a core from the threads that answer its completions. On
 * two cores, a hundred spins before ten yields made a get over UCT's tcp 150 µs where yielding alone
 * made it 53 µs, and a put ping-pong 235 µs against 65 to 80 (the perf tool, one process, same run);
 * over UCT's shared memory, active-message ping-pong between two processes was 2.0 µs spinning and
 * 4.5 µs yielding.
 */
public final class WakeupIdleStrategy implements IdleStrategy {
    private static final int YIELDS = 100;

    private final Wakeup wakeup;
    private final int spins;
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
        this.spins = Math.max(0, wakeup.spinsBeforeWait());
        long own = wakeup.maxWaitNanos(maxWaitNanos);
        this.maxWaitNanos = own > 0 ? own : maxWaitNanos;
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
        if (turn < spins) {
            Thread.onSpinWait();
        } else if (turn < spins + YIELDS || closing.getAsBoolean()) {
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
