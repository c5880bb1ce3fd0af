package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.TransportOp;

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
        readEnded(ledger); // before the callbacks: a write they issue after a fence need not wait
        request.succeed(value); // the user's callbacks run here, in answer order
        settled(ledger);
    }

    @Override
    public void failed(FencelineException error) {
        DirectLedger ledger = channel.direct();
        ledger.postedCounted(true);
        readEnded(ledger);
        request.fail(error); // its future, or the next flush for an implicit operation
        settled(ledger);
    }

    /** After the completion: a flush that covers it may complete now, and the actor take submissions. */
    private static void settled(DirectLedger ledger) {
        ledger.postedSettled();
        ledger.postingEnded(1);
    }

    /** A get is no longer open here once answered or given back (the actor's barrier covers the rest). */
    private void readEnded(DirectLedger ledger) {
        if (request.kind == Request.Kind.GET) {
            ledger.readEnded(request.epoch);
        }
    }

    @Override
    public void returned() {
        DirectLedger ledger = channel.direct();
        readEnded(ledger);
        ledger.returned(this);
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
