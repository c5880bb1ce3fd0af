package dev.fenceline.internal;

/**
 * An endpoint's fence record, immutable. All fence arithmetic is here, as pure functions, so it is
 * tested apart from the actor (docs/fences.md).
 *
 * @param epoch the last epoch enforced on the endpoint
 * @param unflushed lanes (bit i = lane i) that carry RMA/AMO work since the last enforced epoch
 * @param dirty whether {@code unflushed} may be stale because a tracked lane's connection changed
 * @param inFlightEpoch the epoch the in-flight strong fence enforces, or {@link #NONE}
 * @param inFlightLanes the lanes the in-flight strong fence flushes
 * @param pinned after a weak fence: the lane whose work from before {@code epoch} is ordered only by
 *     that lane, not yet flushed. A request of {@code epoch} on any other lane still needs a strong
 *     fence, or it could overtake that work (the weak path advances the epoch; this keeps it sound: docs/fences.md, "Why the pin")
 * @param pinBase the epoch before the first of the weak fences that rest on {@code pinned}: if the
 *     pinned lane's connection changes, their guarantee is gone and the epoch falls back to it
 */
public record FenceState(long epoch, long unflushed, boolean dirty, long inFlightEpoch, long inFlightLanes,
        long pinned, long pinBase) {
    /** No strong fence in flight. */
    public static final long NONE = -1;

    /** @return the state of a new endpoint */
    public static FenceState initial() {
        return new FenceState(0, 0, false, NONE, 0, 0, 0);
    }

    /** @return whether a strong fence is in flight */
    public boolean fenceInFlight() {
        return inFlightEpoch != NONE;
    }

    /**
     * Decides what a fenced request (RMA or AMO) does at its first progress.
     *
     * @param mode the endpoint's fence mode
     * @param requestEpoch the epoch the request captured at issue
     * @param requestLanes the lanes the request will use (non-empty)
     * @param liveLanes the endpoint's live lanes
     * @param queued whether requests are already waiting in the fence queue (they go first)
     * @return the decision, with the next state
     */
    public FenceDecision decide(FenceMode mode, long requestEpoch, long requestLanes, long liveLanes, boolean queued) {
        if (!fenceRequired(requestEpoch, requestLanes)) {
            if (requestEpoch < epoch || (fenceInFlight() && requestEpoch < inFlightEpoch)) {
                // Work of an older epoch admitted late (a request restarted or deferred across a
                // fence, or another thread's): later epochs are no longer enforced over it. Roll
                // the epoch back to it, and the in-flight fence, which started before it, cannot
                // vouch for more either. Found by the chaos test: a restarted request released
                // from the queue after a newer fence completed was overtaken.
                long e = Math.min(epoch, requestEpoch);
                long f = fenceInFlight() ? Math.min(inFlightEpoch, requestEpoch) : NONE;
                return new FenceDecision.Admit(new FenceState(e, unflushed | requestLanes, dirty, f,
                        inFlightLanes, 0, 0), FenceDecision.Why.LATE);
            }
            return new FenceDecision.Admit(withUnflushed(unflushed | requestLanes), FenceDecision.Why.ENFORCED);
        }
        if (fenceInFlight() || queued) {
            return new FenceDecision.Defer(this);
        }
        if (unflushed == 0) {
            return new FenceDecision.Admit(
                    new FenceState(Math.max(epoch, requestEpoch), requestLanes, dirty, NONE, 0, 0, 0),
                    FenceDecision.Why.FAST_FORWARD);
        }
        // Kept even when the record is dirty (docs/fences.md): work of a replaced connection was either
        // completed (so visible) or restarted and recorded again on the lane it now uses.
        boolean singleSameLane = Long.bitCount(unflushed) == 1 && (requestLanes & ~unflushed) == 0
                && (unflushed & liveLanes) != 0;
        // Weak mode is checked at connect (one lane for RMA and atomics), but a lane added later could
        // spread requests: a weak fence orders only its own lane, so anything else is a strong fence.
        boolean weakModeSound = mode == FenceMode.WEAK && (unflushed & ~requestLanes) == 0;
        if (weakModeSound || (mode == FenceMode.ENDPOINT && singleSameLane)) {
            int lane = Long.numberOfTrailingZeros(mode == FenceMode.WEAK ? requestLanes : unflushed);
            // Chained weak fences on one lane all rest on it: if it changes, fall back to before the first.
            long base = pinned != 0 ? pinBase : epoch;
            return new FenceDecision.WeakFence(
                    new FenceState(requestEpoch, requestLanes, dirty, NONE, 0, 1L << lane, base), lane);
        }
        long flush = mode == FenceMode.STRONG ? liveLanes : normalize(unflushed, liveLanes, dirty);
        // The fence consumes the record: work admitted while it flies is tracked afresh. The pin stays
        // until the flush completes, so nothing of the current epoch overtakes the pinned lane meanwhile.
        return new FenceDecision.StartStrongFence(
                new FenceState(epoch, 0, false, Math.max(epoch, requestEpoch), flush, pinned, pinBase), flush);
    }

    /**
     * The common case, decided without allocating: the request's epoch is enforced, it is not late,
     * and its lanes are already recorded, so admitting it changes nothing.
     *
     * @param requestEpoch the request's epoch
     * @param requestLanes the lanes it uses
     * @return whether {@link #decide} would admit it and return this same state
     */
    public boolean admitsUnchanged(long requestEpoch, long requestLanes) {
        return requestEpoch == epoch && !fenceRequired(requestEpoch, requestLanes)
                && (unflushed & requestLanes) == requestLanes && (!fenceInFlight() || requestEpoch >= inFlightEpoch);
    }

    /**
     * @param requestEpoch the request's epoch
     * @param requestLanes the lanes it uses
     * @return whether work from before its epoch may still be unordered with it: its epoch is not
     *     enforced yet, or it is the epoch a weak fence enforced on another lane only
     */
    public boolean fenceRequired(long requestEpoch, long requestLanes) {
        return requestEpoch > epoch || (requestEpoch == epoch && pinned != 0 && (requestLanes & ~pinned) != 0);
    }

    /**
     * Admission of a request whose ordering is only per lane (active messages are not fenced) or
     * that was deferred and is now released: records its lanes.
     *
     * @param lanes the lanes used
     * @return the next state
     */
    public FenceState withUnflushed(long lanes) {
        return new FenceState(epoch, lanes, dirty, inFlightEpoch, inFlightLanes, pinned, pinBase);
    }

    /** @return the state after the in-flight strong fence completed successfully */
    public FenceState strongFenceCompleted() {
        return new FenceState(Math.max(epoch, inFlightEpoch), unflushed, dirty, NONE, 0, 0, 0);
    }

    /**
     * The in-flight strong fence failed: the epoch does not advance, the lanes it should have
     * flushed are still unflushed, and the record is dirty (the failed lanes' fate is unknown).
     *
     * @return the next state
     */
    public FenceState strongFenceFailed() {
        return new FenceState(epoch, unflushed | inFlightLanes, true, NONE, 0, pinned, pinBase);
    }

    /**
     * A lane slot's connection changed. The record becomes dirty iff the slot is tracked
     * in {@code unflushed} and held a real connection before (x to null, x to y); null to x cannot
     * have carried work. A change of the pinned slot voids the weak fence: the epoch falls back.
     *
     * @param index the slot
     * @param hadConnection whether the slot held a connection before the change
     * @return the next state
     */
    public FenceState slotChanged(int index, boolean hadConnection) {
        long bit = 1L << index;
        boolean d = dirty || (hadConnection && (unflushed & bit) != 0);
        if ((pinned & bit) != 0) {
            return new FenceState(pinBase, unflushed, true, inFlightEpoch, inFlightLanes, 0, 0);
        }
        return new FenceState(epoch, unflushed, d, inFlightEpoch, inFlightLanes, pinned, pinBase);
    }

    /**
     * The in-flight strong fence is re-issued after a reconfiguration's replay: it now flushes
     * {@code lanes} (every live lane) behind everything posted so far, so it vouches for its whole
     * target epoch again (requests still queued are admitted later, and roll the epoch back then).
     *
     * @param lanes the lanes the restarted fence flushes
     * @param target the epoch the fence was started for
     * @return the next state
     */
    public FenceState strongFenceRestarted(long lanes, long target) {
        return new FenceState(epoch, unflushed, false, target, lanes, pinned, pinBase);
    }

    /**
     * {@code update(unflushed, live) = (unflushed ⊄ live) ? live : unflushed}: a recorded lane that is
     * no longer live cannot be identified by index, so every live lane must be flushed.
     *
     * @param unflushed recorded lanes
     * @param live live lanes
     * @return the lanes to flush
     */
    public static long update(long unflushed, long live) {
        return (unflushed & ~live) != 0 ? live : unflushed;
    }

    /**
     * {@code normalize(unflushed, live, dirty) = (unflushed ≠ ∅ ∧ dirty) ? live : update(unflushed, live)}.
     *
     * @param unflushed recorded lanes
     * @param live live lanes
     * @param dirty whether the record may be stale
     * @return the lanes a strong fence must flush
     */
    public static long normalize(long unflushed, long live, boolean dirty) {
        return (unflushed != 0 && dirty) ? live : update(unflushed, live);
    }
}
