package dev.fenceline.transport.sim;

import dev.fenceline.spi.Revocation;
import dev.fenceline.spi.TransportOp;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a {@link SimLane} remembers of its operations: the tokens posted whose answer has not been
 * handed to the endpoint yet, the one the target is applying right now, what a stalled target has
 * not taken; and what a revocation makes of them. Takes no lock of its own: call every method
 * holding the lane's monitor ({@code synchronized (lane)}).
 */
final class SimLaneLedger {
    /** What a stalled target has not taken yet: a delivery, or a flush to answer. */
    record Held(TransportOp op, Runnable flushAnswer) {
    }

    /**
     * Tokens posted whose answer has not been handed to the endpoint yet, each with whether the
     * target applied it (then its answer is lost if the lane dies). Null until the first post (a
     * simulated worker may hold ten thousand idle lanes).
     */
    private HashMap<Long, Boolean> unanswered;
    /** The operation the target is applying right now (outside the lock), if any. */
    private boolean applying;
    /** Its token. */
    private long applyingToken;
    /** Its kind. */
    private TransportOp.Kind applyingKind;
    /** A revoke promised the answer of the operation being applied. */
    private boolean applyingOwed;
    /** The target stopped taking the lane's deliveries. */
    private boolean stalled;
    /** What the stalled target has not taken, in order. */
    private final ArrayDeque<Held> held = new ArrayDeque<>(1); // rarely used: start small

    /** @return the unanswered tokens, created at first use */
    private HashMap<Long, Boolean> unanswered() {
        if (unanswered == null) {
            unanswered = new HashMap<>();
        }
        return unanswered;
    }

    /** @param token an operation posted, not applied yet */
    void posted(long token) {
        unanswered().put(token, false);
    }

    /** @param token an operation the target applied: its answer is lost if the lane dies */
    void applied(long token) {
        unanswered().put(token, true);
    }

    /** @param token an operation whose answer the endpoint has now */
    void answered(long token) {
        unanswered().remove(token);
    }

    /** @param op the operation the target starts applying (outside the lock) */
    void applying(TransportOp op) {
        applying = true;
        applyingToken = op.token();
        applyingKind = op.kind();
        applyingOwed = false;
    }

    /** @return whether a revoke promised the answer of the operation the target just applied */
    boolean doneApplying() {
        applying = false;
        boolean owed = applyingOwed;
        applyingOwed = false;
        return owed;
    }

    /** @return whether the target is stalled: it holds what comes */
    boolean stalled() {
        return stalled;
    }

    /** The target stops taking the lane's deliveries. */
    void stall() {
        stalled = true;
    }

    /** @param h a delivery or a flush the stalled target takes later, in order */
    void hold(Held h) {
        held.add(h);
    }

    /** @return what the target held, in order, for it to take now: it is no longer stalled */
    List<Held> resume() {
        stalled = false;
        List<Held> taken = new ArrayList<>(held);
        held.clear();
        return taken;
    }

    /**
     * The fates of the lane's operations as it dies: its answer is on its way to the endpoint
     * already, or it was applied and its answer is lost with the lane, or it will never be applied.
     *
     * @param revocable whether the lane lets the origin withdraw what a stalled target holds
     * @return each token's fate
     */
    Revocation revoke(boolean revocable) {
        Set<Long> waiting = new HashSet<>();
        Set<Long> applied = new HashSet<>();
        if (unanswered != null) {
            unanswered.forEach((token, wasApplied) -> (wasApplied ? applied : waiting).add(token));
        }
        if (applying) {
            // The target is inside it. A write or an atomic ends soon and what is fenced behind
            // it must wait for it: its answer follows. A handler may take any time and a get's
            // read goes nowhere now: those are stopped.
            waiting.remove(applyingToken);
            if (applyingKind == TransportOp.Kind.AM || applyingKind == TransportOp.Kind.GET) {
                applied.add(applyingToken);
            } else {
                applyingOwed = true;
            }
        }
        // A stalled target takes later whatever waits for it, unless the lane lets the origin
        // withdraw it (as shm does in the shared segment).
        boolean late = stalled && !revocable;
        if (stalled && revocable) {
            held.removeIf(h -> h.op() != null);
        }
        return token -> applied.contains(token) ? Revocation.Fate.STOPPED
                : waiting.contains(token) ? (late ? Revocation.Fate.MAY_STILL_APPLY : Revocation.Fate.REVOKED)
                : Revocation.Fate.ANSWER_FOLLOWS;
    }
}
