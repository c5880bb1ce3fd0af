package dev.fenceline.testkit;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.spi.RemoteAccessTarget;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The target worker's memory: one region, checked like the runtime's (key, bounds, alignment),
 * whose accessors wait while the suite holds the target.
 */
final class ContractTarget implements RemoteAccessTarget {
    private static final Duration WAIT = TransportContractSuite.WAIT;
    private static final int REGION = TransportContractSuite.REGION;
    private static final long KEY_ID = TransportContractSuite.KEY_ID;

    private final ByteBuffer region;
    final long base;
    private volatile CountDownLatch held;
    private final AtomicInteger entered = new AtomicInteger();

    ContractTarget(ByteBuffer region, long base) {
        this.region = region;
        this.base = base;
    }

    void hold() {
        entered.set(0);
        held = new CountDownLatch(1);
    }

    void release() {
        CountDownLatch h = held;
        held = null;
        if (h != null) {
            h.countDown();
        }
    }

    /** Waits until the held target took {@code n} operations (it is inside the last). */
    void awaitEntered(int n) {
        long end = System.nanoTime() + WAIT.toNanos();
        while (entered.get() < n) {
            if (System.nanoTime() > end) {
                throw new AssertionError("the target took " + entered.get() + " operations, not " + n);
            }
            Thread.onSpinWait();
        }
    }

    synchronized void zero() {
        for (int i = 0; i < REGION; i += 8) {
            region.putLong(i, 0);
        }
    }

    long word(int offset) {
        return region.getLong(offset);
    }

    private int offset(long keyId, long address, int n, int align) {
        entered.incrementAndGet();
        CountDownLatch h = held;
        if (h != null) {
            try {
                if (!h.await(WAIT.toMillis() * 3, TimeUnit.MILLISECONDS)) {
                    throw new FencelineException("contract: the suite held the target too long");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FencelineException("contract: interrupted while held");
            }
        }
        if (keyId != KEY_ID) {
            throw new RemoteAccessException(RemoteAccessException.Reason.UNKNOWN_KEY, "contract: no key " + keyId);
        }
        long at = address - base;
        if (at < 0 || n < 0 || at > REGION - n) {
            throw new RemoteAccessException(RemoteAccessException.Reason.OUT_OF_BOUNDS, "contract: 0x"
                    + Long.toHexString(address) + " + " + n + " is outside the region");
        }
        if (align > 1 && (at & (align - 1)) != 0) {
            throw new RemoteAccessException(RemoteAccessException.Reason.MISALIGNED, "contract: misaligned");
        }
        return (int) at;
    }

    @Override
    public synchronized void put(long keyId, long address, ByteBuffer src) {
        int at = offset(keyId, address, src.remaining(), 1);
        region.put(at, src, src.position(), src.remaining());
    }

    @Override
    public synchronized void put(long keyId, long address, ByteBuffer[] parts) {
        int n = 0;
        for (ByteBuffer p : parts) {
            n += p.remaining();
        }
        int at = offset(keyId, address, n, 1);
        for (ByteBuffer p : parts) {
            region.put(at, p, p.position(), p.remaining());
            at += p.remaining();
        }
    }

    @Override
    public synchronized void get(long keyId, long address, ByteBuffer dst) {
        int at = offset(keyId, address, dst.remaining(), 1);
        dst.put(dst.position(), region, at, dst.remaining());
    }

    @Override
    public synchronized long atomic(long keyId, long address, int width, AtomicOp op, long operand) {
        int at = offset(keyId, address, width, width);
        long old = width == 8 ? region.getLong(at) : region.getInt(at);
        long next = switch (op) {
            case ADD -> old + operand;
            case AND -> old & operand;
            case OR -> old | operand;
            case XOR -> old ^ operand;
            case SWAP -> operand;
        };
        if (width == 8) {
            region.putLong(at, next);
        } else {
            region.putInt(at, (int) next);
        }
        return old;
    }

    @Override
    public synchronized long compareAndSwap(long keyId, long address, int width, long expected, long desired) {
        int at = offset(keyId, address, width, width);
        long old = width == 8 ? region.getLong(at) : region.getInt(at);
        if (old == expected) {
            if (width == 8) {
                region.putLong(at, desired);
            } else {
                region.putInt(at, (int) desired);
            }
        }
        return old;
    }

    @Override
    public void activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
        throw new dev.fenceline.ActiveMessageException("contract: no handler " + id);
    }
}
