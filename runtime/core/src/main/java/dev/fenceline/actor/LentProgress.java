package dev.fenceline.actor;

import dev.fenceline.CallerProgress;
import java.util.List;

/** A worker's {@link CallerProgress}: the loans its transports made, polled and closed together. */
final class LentProgress implements CallerProgress {
    private final CallerProgress[] loans;
    private final Thread borrower = Thread.currentThread();

    /** @param loans the transports' loans, taken on this thread */
    LentProgress(List<CallerProgress> loans) {
        this.loans = loans.toArray(new CallerProgress[0]);
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

    @Override
    public void close() {
        checkThread("close");
        closeAll(List.of(loans));
    }

    /** Closes each, whatever the others throw; the first failure is thrown, the rest added to it. */
    static void closeAll(List<CallerProgress> loans) {
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
            throw new IllegalStateException(what + " by " + Thread.currentThread().getName()
                    + ": this worker's I/O is lent to " + borrower.getName());
        }
    }
}
