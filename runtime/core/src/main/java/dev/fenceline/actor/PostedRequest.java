package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.internal.VarHandles;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.TransportOp;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A request a calling thread posted on its endpoint's granted lane itself (the fast path by grant
 * on a lane whose operations are answered later, docs/architecture.md): the lane numbers it, the
 * thread that reads its answer completes it, and if the lane ends first the actor takes it back
 * ({@link TakenBack}) and restarts it under the same sequence number.
 */
final class PostedRequest implements PostedOperation {
    private final EndpointChannel channel;
    private final GrantSlot.Grant grant;
    final Request request;
    private final TransportOp op;
    private static final VarHandle READ_OPEN = VarHandles.field(MethodHandles.lookup(), "readOpen", int.class);
    /** 1 while it is a get the direct ledger counts open ({@link #readOpened}), else 0. */
    private volatile int readOpen;

    /**
     * @param channel the endpoint's channel
     * @param grant the grant it is posted under (the lane numbers it only while that grant holds)
     * @param request the request (its future, or none for an implicit operation)
     * @param op what the lane sends
     */
    PostedRequest(EndpointChannel channel, GrantSlot.Grant grant, Request request, TransportOp op) {
        this.channel = channel;
        this.grant = grant;
        this.request = request;
        this.op = op;
    }

    @Override
    public TransportOp op() {
        return op;
    }

    @Override
    public boolean answerMayWait() {
        return request.implicit();
    }

    @Override
    public long sequence() {
        DirectLedger ledger = channel.direct();
        // The number first, then the grant: a submission after this check is numbered after this
        // operation by the actor, which waits for it; a number taken after the grant ended is a gap
        // that is never sent.
        long sn = ledger.takeSequences(1);
        if (channel.grant().valid() != grant) {
            return -1;
        }
        ledger.answers.queued();
        request.firstSn = sn;
        op.identify(channel.endpointId(), sn, sn);
        if (request.trace != null) {
            request.trace.admitted(RequestTrace.DIRECT, sn, true, false);
        }
        return sn;
    }

    @Override
    public void completed(long value) {
        DirectLedger ledger = channel.direct();
        ledger.postedCounted(false); // counted first, as the actor counts before it completes
        readClosed(); // before the callbacks: a write they issue after a fence need not wait
        request.succeed(value); // the user's callbacks run here, in answer order
        settled(ledger);
    }

    @Override
    public void failed(FencelineException error) {
        DirectLedger ledger = channel.direct();
        ledger.postedCounted(true);
        readClosed();
        request.fail(error); // its future, or the next flush for an implicit operation
        settled(ledger);
    }

    /** After the completion: a flush that covers it may complete now, and the actor take submissions. */
    private static void settled(DirectLedger ledger) {
        ledger.postedSettled();
        ledger.postingEnded(1);
    }

    /** A posted get counts as open in the ledger (the caller's thread, before the lane may send it). */
    void readOpened() {
        channel.direct().readPosted(request.epoch);
        readOpen = 1;
    }

    /**
     * A get is no longer open once answered, failed, given back or not taken (the actor's barrier
     * covers the rest). Once only, whatever calls it: a lane that numbered the get and then threw
     * (not taken) may still give it back later, and a second close would close another get of the
     * same epoch that is still open.
     */
    void readClosed() {
        if (readOpen == 1 && READ_OPEN.compareAndSet(this, 1, 0)) { // the read first: most are not gets
            channel.direct().readEnded(request.epoch);
        }
    }

    @Override
    public void returned() {
        readClosed();
        channel.direct().returned(this);
    }

    /** @return the slot of the lane it was posted on */
    int slot() {
        return grant.slot();
    }

    /** @return that lane's connection */
    LaneConnection connection() {
        return (LaneConnection) grant.posting();
    }

    @Override
    public String toString() {
        return "posted " + request;
    }
}
