package dev.fenceline.actor;

import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.DirectPosting;

/**
 * Where the endpoint actor publishes the fast path's grant (docs/architecture.md) for calling threads: valid
 * only while no submission has come after it, so a thread's direct operation never passes anything
 * it submitted before.
 */
final class GrantSlot {
    /**
     * Permission for calling threads to perform operations directly on {@code lane}.
     *
     * @param lane the lane that performs them, complete on return; null if {@code posting} is set
     * @param posting the lane that takes them from calling threads and answers later; null if
     *     {@code lane} is set
     * @param slot the lane's slot
     * @param stamp the submission count when it was published
     * @param activeMessages whether active messages may go directly too
     */
    record Grant(DirectAccess lane, DirectPosting posting, int slot, long stamp, boolean activeMessages) {
    }

    private final SubmissionQueue submissions;
    private volatile Grant grant;
    /**
     * Set by the actor while it completes a request after publishing the grant for what follows
     * it: a flush on the fast path must wait for the actor then, or it would complete before that
     * request. Written before the grant, so a thread that sees the grant sees this too.
     */
    private volatile boolean completing;

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
     * @param lane the lane that acts directly, complete on return (or null)
     * @param posting the lane that takes posted operations (or null)
     * @param slot the lane's slot
     * @param activeMessages whether active messages may go directly too
     */
    void publish(DirectAccess lane, DirectPosting posting, int slot, boolean activeMessages) {
        long n = submissions.submitted();
        Grant g = grant;
        if (n != submissions.polled()) {
            grant = null;
        } else if (g == null || g.lane() != lane || g.posting() != posting || g.slot() != slot || g.stamp() != n
                || g.activeMessages() != activeMessages) {
            grant = new Grant(lane, posting, slot, n, activeMessages);
        }
    }

    /**
     * Actor: {@code true} before publishing a grant ahead of completing a request, {@code false}
     * once the request completed.
     *
     * @param c whether a request taken before the grant is completing now
     */
    void completing(boolean c) {
        completing = c;
    }

    /** @return whether a request taken before the current grant has not completed yet (read after {@link #valid()}) */
    boolean completing() {
        return completing;
    }

    /** Actor: no grant. */
    void revoke() {
        grant = null;
    }
}
