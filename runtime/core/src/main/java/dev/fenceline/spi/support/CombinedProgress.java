package dev.fenceline.spi.support;

import dev.fenceline.CallerProgress;
import java.util.List;

/**
 * Several loans of one borrower ({@link dev.fenceline.Worker#progressHere()}: a transport's event
 * loops, its progress agents' threads) polled and closed as one, by the thread that took them.
 */
public final class CombinedProgress implements CallerProgress {
    private final CallerProgress[] loans;
    private final Thread borrower = Thread.currentThread();

    private CombinedProgress(List<? extends CallerProgress> loans) {
        this.loans = loans.toArray(new CallerProgress[0]);
    }

    /**
     * @param loans loans the calling thread took
     * @return them as one, for the calling thread only
     */
    public static CombinedProgress of(List<? extends CallerProgress> loans) {
        return new CombinedProgress(loans);
    }

    @Override
    public int progress() {
        checkThread("progress");
        int n = 0;
        for (CallerProgress p : loans) {
            n += p.progress();
        }
        return n;
    }

    /** Closes each, whatever the others throw; the first failure is thrown, the rest added to it. */
    @Override
    public void close() {
        checkThread("close");
        RuntimeException failure = null;
        for (CallerProgress p : loans) {
            try {
                p.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void checkThread(String what) {
        if (Thread.currentThread() != borrower) {
            throw new IllegalStateException(what + " by " + Thread.currentThread().getName() + ": lent to "
                    + borrower.getName());
        }
    }
}
