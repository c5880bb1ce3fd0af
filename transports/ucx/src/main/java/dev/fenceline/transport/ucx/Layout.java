package dev.fenceline.transport.ucx;

/**
 * The native library's own records (an operation block, an event record and a worker's status, declared in
 * {@code fenceline_uct.h}) and the codes Java acts on. These are this module's ABI, not UCT's; they
 * are checked against the compiled library at load ({@link #check}), so a mismatch refuses to load
 * rather than corrupting memory.
 */
final class Layout {
    // FLU_L_* ids, in the header's order.
    private static final int L_OP_SIZE = 0;
    private static final int L_EV_SIZE = 14;
    private static final int L_STATUS_INPROGRESS = 21;
    private static final int L_ST_SIZE = 28;

    static final int OP_SIZE = 88;
    static final int OP_LOCAL = 0;
    static final int OP_LENGTH = 8;
    static final int OP_REMOTE = 16;
    static final int OP_RKEY = 24;
    static final int OP_MEMH = 32;
    static final int OP_TOKEN = 40;
    static final int OP_VALUE = 48;
    static final int OP_COMPARE = 56;
    static final int OP_RESULT = 64;
    static final int OP_KIND = 72;
    static final int OP_ATOMIC_OP = 76;
    static final int OP_WIDTH = 80;
    static final int OP_AM_ID = 84;

    static final int EV_SIZE = 24;
    static final int EV_TYPE = 0;
    static final int EV_STATUS = 1;
    static final int EV_AM_ID = 2;
    static final int EV_LENGTH = 4;
    static final int EV_TOKEN = 8;
    static final int EV_VALUE = 16;

    static final int ST_SIZE = 24;
    static final int ST_EVENTS = 0;
    static final int ST_LENGTH = 8;
    static final int ST_DROPPED = 16;

    private static final int[] OP_FIELDS = {OP_SIZE, OP_LOCAL, OP_LENGTH, OP_REMOTE, OP_RKEY, OP_MEMH, OP_TOKEN,
        OP_VALUE, OP_COMPARE, OP_RESULT, OP_KIND, OP_ATOMIC_OP, OP_WIDTH, OP_AM_ID};
    private static final int[] EV_FIELDS = {EV_SIZE, EV_TYPE, EV_STATUS, EV_AM_ID, EV_LENGTH, EV_TOKEN, EV_VALUE};
    private static final int[] ST_FIELDS = {ST_SIZE, ST_EVENTS, ST_LENGTH, ST_DROPPED};

    // flu_op.kind
    static final int PUT_SHORT = 1;
    static final int PUT_BCOPY = 2;
    static final int PUT_ZCOPY = 3;
    static final int GET_SHORT = 4;
    static final int GET_BCOPY = 5;
    static final int GET_ZCOPY = 6;
    static final int ATOMIC_POST = 7;
    static final int ATOMIC_FETCH = 8;
    static final int CSWAP = 9;
    static final int AM_SHORT = 10;
    static final int AM_BCOPY = 11;
    static final int FLUSH = 12;
    static final int FENCE = 13;
    static final int PENDING = 14;

    // flu_event.type
    static final int EV_COMPLETION = 1;
    static final int EV_AM = 2;
    static final int EV_READY = 3;
    static final int EV_EP_ERROR = 4;

    // FLU_ACCESS_*
    static final int ACCESS_READ = 1;
    static final int ACCESS_WRITE = 2;
    static final int ACCESS_ATOMIC = 4;

    private Layout() {
    }

    /** @return what differs between this class and the loaded library, or null if nothing */
    static String check(Shim shim) {
        for (int i = 0; i < OP_FIELDS.length; i++) {
            long native_ = shim.flu_layout(L_OP_SIZE + i);
            if (native_ != OP_FIELDS[i]) {
                return "libfenceline-uct's operation block field " + i + " is at " + native_ + ", expected "
                        + OP_FIELDS[i];
            }
        }
        for (int i = 0; i < EV_FIELDS.length; i++) {
            long native_ = shim.flu_layout(L_EV_SIZE + i);
            if (native_ != EV_FIELDS[i]) {
                return "libfenceline-uct's event record field " + i + " is at " + native_ + ", expected "
                        + EV_FIELDS[i];
            }
        }
        int[] statuses = {UctStatus.IN_PROGRESS, UctStatus.NO_RESOURCE, UctStatus.BUSY, UctStatus.UNSUPPORTED,
            UctStatus.EXCEEDS_LIMIT, UctStatus.NO_DEVICE};
        for (int i = 0; i < statuses.length; i++) {
            long native_ = shim.flu_layout(L_STATUS_INPROGRESS + i);
            if (native_ != statuses[i]) {
                return "UCS status " + i + " is " + native_ + " in the loaded library, expected " + statuses[i];
            }
        }
        if (shim.flu_layout(L_STATUS_INPROGRESS + 6) != UctIfaceAttributes.COUNT) {
            return "libfenceline-uct has " + shim.flu_layout(L_STATUS_INPROGRESS + 6) + " iface attributes, expected "
                    + UctIfaceAttributes.COUNT;
        }
        for (int i = 0; i < ST_FIELDS.length; i++) {
            long native_ = shim.flu_layout(L_ST_SIZE + i);
            if (native_ != ST_FIELDS[i]) {
                return "libfenceline-uct's worker status field " + i + " is at " + native_ + ", expected "
                        + ST_FIELDS[i];
            }
        }
        return null;
    }
}
