package dev.fenceline.spi;

/**
 * A lane on which calling threads may post operations themselves, to be answered later: the
 * endpoint's fast path by grant for a lane whose operations are not complete on return (a socket,
 * where the answer is a reply from the peer). The calling thread frames and writes the operation;
 * the lane numbers it for exactly-once through the operation ({@link PostedOperation#sequence}),
 * keeps it until its answer comes and completes it on the thread that reads the answer; if the lane
 * ends first, it gives every unanswered operation back ({@link PostedOperation#returned}), so that
 * the endpoint can send it again where the target recognizes it. Called from any thread while the
 * endpoint's grant is valid; thread-safe, and ordered with the endpoint's own {@code post} calls.
 */
public interface DirectPosting {
    /**
     * @return whether this lane takes operations from calling threads at all (a setting may turn it off)
     */
    default boolean postsDirectly() {
        return true;
    }

    /**
     * Posts an operation on the calling thread. The lane calls {@link PostedOperation#sequence} under
     * its own order (before the operation can be answered, and in the order it writes them); if that
     * says the grant ended, the lane sends nothing and returns false.
     *
     * @param op the operation (a put or a get of at most the lane's short size, or an atomic)
     * @return true if the lane took it: it now completes it, fails it or gives it back, exactly once;
     *     false if it cannot take it now (no room, the lane ended, the grant ended): nothing was sent
     * @throws dev.fenceline.FencelineException if the operation can never go on this lane (too large)
     */
    boolean postNow(PostedOperation op);
}
