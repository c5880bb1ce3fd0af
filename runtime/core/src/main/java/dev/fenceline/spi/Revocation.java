package dev.fenceline.spi;

/**
 * What became of the operations a lane connection was given, once its endpoint gave it up: the
 * endpoint asks once ({@link LaneConnection#revoke()}), before it sends any of them again or reports
 * any of them failed, and trusts the answer. A copy that may still be applied later must never be
 * reported as not applied, and must never land after work fenced behind it; so a transport that
 * cannot tell says {@link Fate#MAY_STILL_APPLY}, the safe answer.
 */
@FunctionalInterface
public interface Revocation {
    /** One operation's fate. */
    enum Fate {
        /** Not applied, and never will be: the endpoint may send it again anywhere, or report it not applied. */
        REVOKED,
        /**
         * The connection will still answer it, completed or failed, through its listener (even after
         * {@link LaneConnection#close()}): the endpoint waits for that answer, and work fenced behind
         * it waits too.
         */
        ANSWER_FOLLOWS,
        /** It may have been applied, but will not be from now on: the copy is gone. */
        STOPPED,
        /**
         * It may be applied at any later time (it waits in a buffer the origin cannot reach), unless
         * the target recognizes a re-sent copy ({@link LaneConnection#exactlyOnceScope()}).
         */
        MAY_STILL_APPLY
    }

    /** Nothing is known: every copy may still apply. */
    Revocation MAY_STILL_APPLY = token -> Fate.MAY_STILL_APPLY;

    /** Every copy is gone (the target died, or the lane applies nothing after it failed). */
    Revocation STOPPED = token -> Fate.STOPPED;

    /** Nothing was applied, and nothing will be (a lane that completes everything before post returns). */
    Revocation REVOKED = token -> Fate.REVOKED;

    /**
     * @param token an operation posted on the connection and not yet answered
     * @return its fate
     */
    Fate fate(long token);
}
