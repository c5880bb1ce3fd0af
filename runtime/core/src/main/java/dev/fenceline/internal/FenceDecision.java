package dev.fenceline.internal;

/**
 * What {@link FenceState#decide} tells the endpoint to do with a fenced request. Deferral, an
 * admission and a fence start are distinct types: nothing is signalled through an error code.
 */
public sealed interface FenceDecision {
    /** @return the endpoint's fence state after the decision */
    FenceState next();

    /** Why a request was admitted without a fence. */
    enum Why {
        /** Its epoch was already enforced. */
        ENFORCED,
        /**
         * An older epoch than the endpoint's (admitted late): the endpoint's epoch rolls back to it,
         * so that later epochs fence over it.
         */
        LATE,
        /** Nothing preceded it: the epoch fast-forwards. */
        FAST_FORWARD
    }

    /**
     * Post the request now.
     *
     * @param next the next state
     * @param why why no fence was needed
     */
    record Admit(FenceState next, Why why) implements FenceDecision {
    }

    /**
     * Apply a weak fence on {@code lane}, then post the request; the epoch has advanced.
     *
     * @param next the next state
     * @param lane the lane to fence
     */
    record WeakFence(FenceState next, int lane) implements FenceDecision {
    }

    /**
     * Start one non-blocking strong fence (remote flush of {@code lanes}) and queue the request.
     *
     * @param next the next state, with the fence in flight
     * @param lanes the normalized lanes to flush
     */
    record StartStrongFence(FenceState next, long lanes) implements FenceDecision {
    }

    /**
     * Queue the request behind the in-flight fence or the requests already queued.
     *
     * @param next the (unchanged) state
     */
    record Defer(FenceState next) implements FenceDecision {
    }
}
