package dev.fenceline.perf;

import java.util.Locale;

/** The tests, named as in ucx_perftest where one matches. */
enum PerfTest {
    /** Put ping-pong through memory polling; one-way latency (half the round trip). */
    PUT_LAT(Kind.LATENCY, 8),
    /** Stream of puts, per-operation completion, ended by a fence, a sentinel put and a flush. */
    PUT_BW(Kind.BANDWIDTH, 1),
    /** One get at a time; latency of the operation (a round trip). */
    GET_LAT(Kind.LATENCY, 1),
    /** Stream of gets with a window. */
    GET_BW(Kind.BANDWIDTH, 1),
    /** Stream of posted 64-bit ADDs; message rate. */
    ADD_MR(Kind.RATE, 8),
    /** Stream of 64-bit fetch-and-adds with a window; message rate (ucx_perftest's ucp_fadd). */
    FADD_MR(Kind.RATE, 8),
    /** One 64-bit fetch-and-add at a time; latency of the operation. */
    FADD_LAT(Kind.LATENCY, 8),
    /** One 64-bit swap at a time. */
    SWAP_LAT(Kind.LATENCY, 8),
    /** One 64-bit compare-and-swap at a time. */
    CSWAP_LAT(Kind.LATENCY, 8),
    /** Active-message ping-pong; one-way latency (half the round trip). */
    AM_LAT(Kind.LATENCY, 0),
    /** Stream of active messages with a window. */
    AM_BW(Kind.BANDWIDTH, 0),
    /** Put of 8 bytes then a fence, repeated; rate of the pairs. */
    FENCE_RATE(Kind.RATE, 8),
    /** Put then flush, one at a time; latency until the flush completes. */
    FLUSH_LAT(Kind.LATENCY, 1);

    /** What a test measures. */
    enum Kind { LATENCY, BANDWIDTH, RATE }

    final Kind kind;
    /** The smallest message size the test can use. */
    final int minSize;

    PerfTest(Kind kind, int minSize) {
        this.kind = kind;
        this.minSize = minSize;
    }

    /** @return the name on the command line and in reports, e.g. {@code put_lat} */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @return whether the message size is fixed at 8 bytes (atomics) */
    boolean fixedSize() {
        return this == ADD_MR || this == FADD_MR || this == FADD_LAT || this == SWAP_LAT || this == CSWAP_LAT || this == FENCE_RATE;
    }

    static PerfTest parse(String id) {
        for (PerfTest t : values()) {
            if (t.id().equals(id.trim().toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown test '" + id + "'");
    }
}
