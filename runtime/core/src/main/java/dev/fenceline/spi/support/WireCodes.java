package dev.fenceline.spi.support;

import dev.fenceline.ActiveMessageException;
import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;

/**
 * Codes that software protocols put on the wire for atomic operations and for a target's typed
 * errors, shared by every transport so each rebuilds the same exception at the origin. The codes
 * are spelled out rather than taken from enum ordinals, so reordering a Java enum can never change
 * a protocol.
 */
public final class WireCodes {
    private WireCodes() {
    }

    /**
     * @param op an atomic operation
     * @return its code on the wire (1 to 5)
     */
    public static byte atomicCode(AtomicOp op) {
        return switch (op) {
            case ADD -> 1;
            case AND -> 2;
            case OR -> 3;
            case XOR -> 4;
            case SWAP -> 5;
        };
    }

    /**
     * @param code a code from {@link #atomicCode}
     * @return the operation, or null for an unknown code
     */
    public static AtomicOp atomicOp(int code) {
        return switch (code) {
            case 1 -> AtomicOp.ADD;
            case 2 -> AtomicOp.AND;
            case 3 -> AtomicOp.OR;
            case 4 -> AtomicOp.XOR;
            case 5 -> AtomicOp.SWAP;
            default -> null;
        };
    }

    /** A plain {@link FencelineException}. */
    public static final int OTHER = 0;
    /** A {@link RemoteAccessException}, with a reason code. */
    public static final int REMOTE_ACCESS = 1;
    /** An {@link ActiveMessageException}. */
    public static final int ACTIVE_MESSAGE = 2;
    /** An {@link OutcomeUnknownException}. */
    public static final int OUTCOME_UNKNOWN = 3;
    /** An {@link EndpointFailedException}: not applied, and never will be (the origin's worker is refused). */
    public static final int ENDPOINT_FAILED = 4;

    /**
     * @param e an error a target raised
     * @return its code on the wire
     */
    public static int errorCode(FencelineException e) {
        if (e instanceof RemoteAccessException) {
            return REMOTE_ACCESS;
        }
        if (e instanceof ActiveMessageException) {
            return ACTIVE_MESSAGE;
        }
        if (e instanceof EndpointFailedException) {
            return ENDPOINT_FAILED;
        }
        return e instanceof OutcomeUnknownException ? OUTCOME_UNKNOWN : OTHER;
    }

    /**
     * @param e an error a target raised
     * @return its refusal reason on the wire (0 if it has none)
     */
    public static int reasonCode(FencelineException e) {
        if (!(e instanceof RemoteAccessException r)) {
            return 0;
        }
        return switch (r.reason()) {
            case UNKNOWN_KEY -> 1;
            case MALFORMED_KEY -> 2;
            case WRONG_PEER -> 3;
            case OUT_OF_BOUNDS -> 4;
            case REGION_CLOSED -> 5;
            case MISALIGNED -> 6;
            case INVALID_OPERATION -> 7;
            case ACCESS_DENIED -> 8;
        };
    }

    /**
     * @param code an error code from {@link #errorCode}
     * @param reason a reason code from {@link #reasonCode}
     * @param message the target's message
     * @return the exception the origin reports; an unknown code becomes a plain FencelineException
     */
    public static FencelineException rebuild(int code, int reason, String message) {
        return switch (code) {
            case REMOTE_ACCESS -> {
                Reason r = switch (reason) {
                    case 1 -> Reason.UNKNOWN_KEY;
                    case 2 -> Reason.MALFORMED_KEY;
                    case 3 -> Reason.WRONG_PEER;
                    case 4 -> Reason.OUT_OF_BOUNDS;
                    case 5 -> Reason.REGION_CLOSED;
                    case 6 -> Reason.MISALIGNED;
                    case 7 -> Reason.INVALID_OPERATION;
                    case 8 -> Reason.ACCESS_DENIED;
                    default -> null;
                };
                yield r == null ? new FencelineException(message + " (unknown refusal reason " + reason + ")")
                        : new RemoteAccessException(r, message);
            }
            case ACTIVE_MESSAGE -> new ActiveMessageException(message);
            case OUTCOME_UNKNOWN -> new OutcomeUnknownException(message);
            case ENDPOINT_FAILED -> new EndpointFailedException(message);
            default -> new FencelineException(message);
        };
    }
}
