package dev.fenceline.actor;

import dev.fenceline.spi.DirectAccess;

/**
 * Where the endpoint actor publishes the fast path's grant (docs/architecture.md) for calling threads: valid
 * only while no submission has come after it, so a thread's direct operation never passes anything
 * it submitted before.
 */
final class GrantSlot {
    /**
     * Permission for calling threads to perform operations directly on {@code lane}.
     *
     * @param lane the lane that performs them
     * @param stamp the submission count when it was published
     * @param activeMessages whether active messages may go directly too
     */
    record Grant(DirectAccess lane, long stamp, boolean activeMessages) {
    }

    private final SubmissionQueue submissions;
    private volatile Grant grant;

    GrantSlot(SubmissionQueue submissions) {
        this.submissions = submissions;
    }

    /** @return the grant if it is still valid, else null */
    Grant valid() {
        Grant g = grant;
        return g != null && g.stamp() == submissions.submitted() ? g : null;
    }

    /**
     * Actor: publishes a grant if every submission so far has been taken (and, by the caller, completed).
     *
     * @param lane the lane that acts directly
     * @param activeMessages whether active messages may go directly too
     */
    void publish(DirectAccess lane, boolean activeMessages) {
        long n = submissions.submitted();
        grant = n == submissions.polled() ? new Grant(lane, n, activeMessages) : null;
    }

    /** Actor: no grant. */
    void revoke() {
        grant = null;
    }
}
