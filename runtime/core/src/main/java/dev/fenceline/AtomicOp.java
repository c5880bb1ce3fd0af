package dev.fenceline;

/**
 * Remote atomic operations. All of them can be fetched (returning the old value); all but
 * {@link #SWAP} can be posted (no result). Compare-and-swap has its own methods on {@link Endpoint}.
 */
public enum AtomicOp {
    /** Add the operand. */
    ADD,
    /** Bitwise and with the operand. */
    AND,
    /** Bitwise or with the operand. */
    OR,
    /** Bitwise exclusive or with the operand. */
    XOR,
    /** Replace with the operand (fetch only: a posted swap would lose the old value). */
    SWAP;

    /** @return whether a post (no fetched result) of this operation is meaningful */
    public boolean postable() {
        return this != SWAP;
    }

    /**
     * What the target's word becomes: the operation as a pure function, for models and checks.
     *
     * @param current the word's value before
     * @param operand the operand
     * @return the word's value after (truncate to {@code int} for 32-bit atomics)
     */
    public long apply(long current, long operand) {
        return switch (this) {
            case ADD -> current + operand;
            case AND -> current & operand;
            case OR -> current | operand;
            case XOR -> current ^ operand;
            case SWAP -> operand;
        };
    }
}
