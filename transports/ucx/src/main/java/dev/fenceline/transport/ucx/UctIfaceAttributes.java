package dev.fenceline.transport.ucx;

import dev.fenceline.AtomicOp;
import java.util.EnumSet;
import java.util.Set;

/**
 * What one UCT iface can do, from {@code uct_iface_query} and its memory domain's
 * {@code uct_md_query}, in the native library's terms (so none of UCT's flag values is read here).
 *
 * @param caps {@code FLU_CAP_*} bits
 * @param putMaxShort largest put_short payload
 * @param putMaxBcopy largest put_bcopy payload
 * @param putMinZcopy smallest put_zcopy payload
 * @param putMaxZcopy largest put_zcopy payload
 * @param getMaxShort largest get_short payload
 * @param getMaxBcopy largest get_bcopy payload
 * @param getMinZcopy smallest get_zcopy payload
 * @param getMaxZcopy largest get_zcopy payload
 * @param amMaxShort largest am_short message, header included
 * @param amMaxBcopy largest am_bcopy message
 * @param amMaxZcopy largest am_zcopy message
 * @param amMaxHeader largest am_zcopy header
 * @param atomic32Post 32-bit posted atomics, bit {@code 1 << op} per {@code FLU_AMO_*}
 * @param atomic32Fetch 32-bit fetching atomics
 * @param atomic64Post 64-bit posted atomics
 * @param atomic64Fetch 64-bit fetching atomics
 * @param deviceAddressLength bytes of a device address
 * @param ifaceAddressLength bytes of an iface address
 * @param endpointAddressLength bytes of an endpoint address
 * @param remoteKeyLength bytes of a packed remote key
 * @param maxAlloc largest allocation of the memory domain
 * @param maxRegistration largest registration of the memory domain
 * @param maxEndpoints endpoints the iface takes
 * @param latencyNanos UCT's latency estimate
 * @param bandwidthMBps UCT's bandwidth estimate, MB/s
 * @param atomicRefuted atomics the iface claims that gave wrong results when tried at open, bit
 *     {@code kind * 8 + op} (kind 0 and 1: 32-bit posted and fetching, 2 and 3: 64-bit); they are
 *     left out of the four masks above
 * @param atomicVerified 1 if the atomics were tried at open, 0 if they are UCT's claim only
 */
record UctIfaceAttributes(long caps, long putMaxShort, long putMaxBcopy, long putMinZcopy, long putMaxZcopy,
        long getMaxShort, long getMaxBcopy, long getMinZcopy, long getMaxZcopy, long amMaxShort, long amMaxBcopy,
        long amMaxZcopy, long amMaxHeader, long atomic32Post, long atomic32Fetch, long atomic64Post,
        long atomic64Fetch, long deviceAddressLength, long ifaceAddressLength, long endpointAddressLength,
        long remoteKeyLength, long maxAlloc, long maxRegistration, long maxEndpoints, long latencyNanos,
        long bandwidthMBps, long atomicRefuted, long atomicVerified) {
    static final long PUT_SHORT = 1L << 0;
    static final long PUT_BCOPY = 1L << 1;
    static final long PUT_ZCOPY = 1L << 2;
    static final long GET_SHORT = 1L << 3;
    static final long GET_BCOPY = 1L << 4;
    static final long GET_ZCOPY = 1L << 5;
    static final long AM_SHORT = 1L << 6;
    static final long AM_BCOPY = 1L << 7;
    static final long AM_ZCOPY = 1L << 8;
    static final long PENDING = 1L << 9;
    static final long CONNECT_TO_IFACE = 1L << 10;
    static final long CONNECT_TO_EP = 1L << 11;
    static final long PEER_FAILURE = 1L << 12;
    static final long ATOMIC_CPU = 1L << 13;
    static final long ATOMIC_DEVICE = 1L << 14;
    static final long EVENT_FD = 1L << 15;
    static final long AM_DUP = 1L << 16;
    static final long MD_ALLOC = 1L << 20;
    static final long MD_REG = 1L << 21;
    static final long MD_NEED_MEMH = 1L << 22;
    static final long MD_NEED_RKEY = 1L << 23;
    static final long MD_RKEY_PTR = 1L << 24;

    /** FLU_AMO_* in {@link AtomicOp} order; compare-and-swap is bit 5. */
    private static final AtomicOp[] OPS = {AtomicOp.ADD, AtomicOp.AND, AtomicOp.OR, AtomicOp.XOR, AtomicOp.SWAP};
    static final int CSWAP_BIT = 5;
    /** How many attributes the native library reports. */
    static final int COUNT = 28;

    /**
     * @param bit a capability bit
     * @return whether the iface has it
     */
    boolean has(long bit) {
        return (caps & bit) != 0;
    }

    /**
     * @return whether a peer reaches this iface's memory through its hardware only with a key the
     *     memory domain checks (an RDMA adapter's): a domain that needs a key but packs it in no bytes
     *     (UCT's tcp, whose puts write any address of the target) does not count
     */
    boolean keyedMemory() {
        return has(MD_NEED_RKEY) && remoteKeyLength > 0;
    }

    /** @return the atomics of one width done by the iface both posted and fetching */
    Set<AtomicOp> atomics(int width) {
        long both = width == 4 ? atomic32Post & atomic32Fetch : atomic64Post & atomic64Fetch;
        Set<AtomicOp> out = EnumSet.noneOf(AtomicOp.class);
        for (int i = 0; i < OPS.length; i++) {
            if ((both & (1L << i)) != 0) {
                out.add(OPS[i]);
            }
        }
        return out;
    }

    /** @return whether compare-and-swap is done in both widths */
    boolean compareAndSwap() {
        return (atomic32Fetch & atomic64Fetch & (1L << CSWAP_BIT)) != 0;
    }

    /** @return the atomics refuted at open, as "fetching 64-bit AND" phrases, or empty */
    java.util.List<String> refutedAtomics() {
        String[] kinds = {"posted 32-bit", "fetching 32-bit", "posted 64-bit", "fetching 64-bit"};
        String[] ops = {"ADD", "AND", "OR", "XOR", "SWAP", "CSWAP"};
        java.util.List<String> out = new java.util.ArrayList<>();
        for (int kind = 0; kind < 4; kind++) {
            for (int op = 0; op < ops.length; op++) {
                if ((atomicRefuted & (1L << (kind * 8 + op))) != 0) {
                    out.add(kinds[kind] + " " + ops[op]);
                }
            }
        }
        return out;
    }

    static UctIfaceAttributes read(Shim shim, long iface) {
        long[] a = new long[COUNT];
        for (int i = 0; i < a.length; i++) {
            a[i] = shim.flu_iface_attr(iface, i);
        }
        return new UctIfaceAttributes(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
                a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25],
                a[26], a[27]);
    }
}
