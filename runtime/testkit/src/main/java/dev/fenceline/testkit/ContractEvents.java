package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The contract suite's listener: every event of a lane in arrival order, from any thread. */
final class ContractEvents implements LaneListener {
    private static final Duration WAIT = TransportContractSuite.WAIT;

    /** A completion. @param token the operation @param value its fetched value */
    record Completed(long token, long value) {
    }

    /** A failure. @param token the operation @param error why */
    record Failed(long token, FencelineException error) {
    }

    /** A flush answered. @param token the flush */
    record Flushed(long token) {
    }

    /** A flush failed. @param token the flush @param error why */
    record FlushFailed(long token, FencelineException error) {
    }

    /** Room again. */
    record Ready() {
    }

    /** The lane failed. @param cause why */
    record LaneFailed(Throwable cause) {
    }

    /** Another connection. @param kind replaced, recovered or added @param connection the connection */
    record Other(String kind, LaneConnection connection) {
    }


    private final LinkedBlockingQueue<Object> arriving = new LinkedBlockingQueue<>();
    private final List<Object> seen = new ArrayList<>();

    @Override
    public void onCompleted(long token, long value) {
        arriving.add(new Completed(token, value));
    }

    @Override
    public void onFailed(long token, FencelineException error) {
        arriving.add(new Failed(token, error));
    }

    @Override
    public void onFlushed(long token) {
        arriving.add(new Flushed(token));
    }

    @Override
    public void onFlushFailed(long token, FencelineException error) {
        arriving.add(new FlushFailed(token, error));
    }

    @Override
    public void onReady() {
        arriving.add(new Ready());
    }

    @Override
    public void onLaneFailed(Throwable cause) {
        arriving.add(new LaneFailed(cause));
    }

    @Override
    public void onReplaced(LaneConnection replacement) {
        arriving.add(new Other("replaced", replacement));
    }

    @Override
    public void onRecovered(LaneConnection connection) {
        arriving.add(new Other("recovered", connection));
    }

    @Override
    public void onLaneAdded(LaneConnection connection) {
        arriving.add(new Other("added", connection));
    }

    /** Moves what arrived within {@code d} into {@link #seen}; returns the first of {@code type} among it, or null. */
    <T> T poll(Duration d, Class<T> type) {
        long end = System.nanoTime() + d.toNanos();
        for (Object e : seen) {
            if (type.isInstance(e)) {
                return type.cast(e);
            }
        }
        while (true) {
            long left = end - System.nanoTime();
            Object e;
            try {
                e = left <= 0 ? arriving.poll() : arriving.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return null;
            }
            if (e == null) {
                return null;
            }
            seen.add(e);
            if (type.isInstance(e)) {
                return type.cast(e);
            }
        }
    }

    <T> T expect(Class<T> type) {
        T e = poll(WAIT, type);
        assertNotNull(e, "no " + type.getSimpleName() + " within " + WAIT + "; events: " + seen);
        return e;
    }

    /** @return the answer to {@code token} (completion, failure, flush), waiting for it */
    Object answerOf(long token) {
        long end = System.nanoTime() + WAIT.toNanos();
        while (true) {
            for (Object e : seen) {
                if (token(e) == token) {
                    return e;
                }
            }
            Object e;
            try {
                e = arriving.poll(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", ie);
            }
            if (e == null) {
                throw new AssertionError("no answer to operation " + token + " within " + WAIT + "; events: "
                        + seen);
            }
            seen.add(e);
        }
    }

    /** @return how many events of {@code type} arrived so far */
    int count(Class<?> type) {
        arriving.drainTo(seen);
        return (int) seen.stream().filter(type::isInstance).count();
    }

    int indexOf(Object event) {
        for (int i = 0; i < seen.size(); i++) {
            if (seen.get(i) == event) {
                return i;
            }
        }
        return -1;
    }

    /** @return how often each token was answered, counting what arrived so far */
    Map<Long, Integer> answerCounts() {
        arriving.drainTo(seen);
        Map<Long, Integer> n = new HashMap<>();
        for (Object e : seen) {
            long t = token(e);
            if (t != Long.MIN_VALUE) {
                n.merge(t, 1, Integer::sum);
            }
        }
        return n;
    }

    private static long token(Object e) {
        if (e instanceof Completed c) {
            return c.token();
        }
        if (e instanceof Failed f) {
            return f.token();
        }
        if (e instanceof Flushed f) {
            return f.token();
        }
        if (e instanceof FlushFailed f) {
            return f.token();
        }
        return Long.MIN_VALUE;
    }
}
