package dev.fenceline.transport.tcp;

import dev.fenceline.ActiveMessageException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;

/** Carries a target's typed error back to the origin in a NACK, and rebuilds it there. */
final class WireErrors {
    static final int OTHER = 0;
    static final int REMOTE_ACCESS = 1;
    static final int ACTIVE_MESSAGE = 2;
    static final int OUTCOME_UNKNOWN = 3;

    private WireErrors() {
    }

    static int code(FencelineException e) {
        if (e instanceof RemoteAccessException) {
            return REMOTE_ACCESS;
        }
        if (e instanceof ActiveMessageException) {
            return ACTIVE_MESSAGE;
        }
        return e instanceof OutcomeUnknownException ? OUTCOME_UNKNOWN : OTHER;
    }

    static int reason(FencelineException e) {
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
        };
    }

    /** @return the exception the origin reports; an unknown code becomes a plain FencelineException */
    static FencelineException rebuild(int code, int reason, String message) {
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
                    default -> null;
                };
                yield r == null ? new FencelineException(message + " (unknown refusal reason " + reason + ")")
                        : new RemoteAccessException(r, message);
            }
            case ACTIVE_MESSAGE -> new ActiveMessageException(message);
            case OUTCOME_UNKNOWN -> new OutcomeUnknownException(message);
            default -> new FencelineException(message);
        };
    }
}
