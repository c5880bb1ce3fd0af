package dev.fenceline.testkit.history;

/**
 * One recorded call on an endpoint.
 *
 * @param id issue order over the whole history
 * @param endpoint which recorded endpoint
 * @param thread the issuing thread's id
 * @param kind what it was
 * @param address the remote address (0 for fences, flushes and messages)
 * @param length bytes touched at the target
 * @param operand the atomic's operand (CSWAP: the desired value)
 * @param data the bytes a put wrote (null otherwise)
 * @param fencesBefore how many fences this endpoint's thread had issued before it
 */
public record Op(long id, int endpoint, long thread, Kind kind, long address, int length, long operand,
        byte[] data, long fencesBefore) {

    /** What was called. */
    public enum Kind {
        /** Remote write. */
        PUT,
        /** Remote read. */
        GET,
        /** Posted atomic ADD. */
        ADD_POST,
        /** Fetching atomic ADD. */
        ADD_FETCH,
        /** Any other atomic (its effect is not modelled). */
        OTHER_ATOMIC,
        /** Active message. */
        MESSAGE,
        /** Endpoint fence. */
        FENCE,
        /** Endpoint flush. */
        FLUSH
    }

    /** @return whether the target word(s) it touches start at {@code a} */
    boolean isAdd() {
        return kind == Kind.ADD_POST || kind == Kind.ADD_FETCH;
    }
}
