package dev.fenceline.transport.ucx;

import java.util.ArrayList;

/**
 * Where UCT's completion of a put or an atomic post says only that UCT took it (an iface whose
 * completions are not in place: a network device), the operation waits, counted in flight, for a UCT
 * flush after it, and is answered when that flush completes: one flush per lane per half pass of the
 * agent covers every one awaiting. A flush completing with an error fails the channel, and what it
 * covered is answered unknown. Progress agent only.
 */
final class UcxUctFlushes {
    private final UcxAgent agent;
    private final UcxSender sender;
    private final UcxDataPath path;

    UcxUctFlushes(UcxAgent agent, UcxSender sender, UcxDataPath path) {
        this.agent = agent;
        this.sender = sender;
        this.path = path;
    }

    /** Lanes with puts and atomic posts awaiting a UCT flush not yet asked for, in the order they came. */
    private ArrayList<UcxLane> wantFlush = new ArrayList<>();
    /** The other list {@link #flushAwaiting} swaps in while it works through one. */
    private ArrayList<UcxLane> flushing = new ArrayList<>();

    /** A put or atomic post UCT completed where that is not in place: answered by a UCT flush after it. */
    void await(UcxLane lane, UcxOp op) {
        lane.traffic.awaitingFlush.add(op);
        wantFlush(lane);
    }

    private void wantFlush(UcxLane lane) {
        if (!lane.traffic.wantsFlush) {
            lane.traffic.wantsFlush = true;
            wantFlush.add(lane);
        }
    }

    /**
     * Twice a pass of the agent: one UCT flush per lane for the puts and atomic posts that await one
     * (a pass's worth of them answered by one flush), where none is in flight; also on a channel
     * this worker failed itself (closing, a broken wireup), whose endpoint is kept while they are
     * counted, but not where UCT failed the endpoint: its flush is not believed, and they are
     * answered unknown. A lane UCT has no room for now stays on the list (its channel's ready event
     * wakes the agent).
     */
    void flushAwaiting() {
        if (wantFlush.isEmpty()) {
            return;
        }
        ArrayList<UcxLane> now = wantFlush;
        wantFlush = flushing; // what a flush completed at once brings (advance posts more) goes there
        flushing = now;
        for (int i = 0; i < now.size(); i++) {
            UcxLane lane = now.get(i);
            lane.traffic.wantsFlush = false;
            if (lane.traffic.coveredByFlush != 0 || lane.traffic.awaitingFlush.isEmpty()) {
                continue; // the flush in flight puts it back on the list if more came meanwhile
            }
            if (lane.channel.uctFailed) {
                // UCT's flush of an endpoint it failed may say OK for what the error purged (RC hands
                // the send slots back): what no flush covered yet may or may not have been placed.
                flushed(lane, lane.traffic.awaitingFlush.size(), "UCT failed its endpoint before a flush after it");
            } else if (!uctFlush(lane)) {
                wantFlush(lane);
            }
        }
        now.clear();
    }

    /** @return false if UCT had no room for the flush now */
    private boolean uctFlush(UcxLane lane) {
        long token = path.nextToken();
        int n = lane.traffic.awaitingFlush.size();
        int status = lane.channel.ep.flush(token);
        if (status == UctStatus.IN_PROGRESS) {
            lane.traffic.coveredByFlush = n;
            path.flushInFlight(token, lane.traffic.uctFlush); // its completion comes back by completed()
            return true;
        }
        if (status == UctStatus.NO_RESOURCE) {
            sender.noRoom(lane.channel);
            return false;
        }
        flushedWith(lane, n, status);
        return true;
    }

    /** The lane's UCT flush in flight completed with {@code status}. */
    void completed(UcxLane lane, int status) {
        flushedWith(lane, lane.traffic.coveredByFlush, status);
    }

    /** @return lanes whose awaiting operations want a UCT flush not yet asked for */
    int lanesWaiting() {
        return wantFlush.size();
    }

    /** A UCT flush of the lane completed with {@code status}: a failed one fails its channel first. */
    private void flushedWith(UcxLane lane, int n, int status) {
        if (status != UctStatus.OK) {
            // Its error purged what it covered: nothing more goes on the endpoint, and what came
            // after is answered unknown too (marked before it is put back).
            lane.channel.uctFailed = true;
            agent.channelFailed(lane.channel, new dev.fenceline.EndpointFailedException("ucx: UCT's flush of "
                    + lane.channel + " completed with " + UctStatus.describe(status)), false);
        }
        flushed(lane, n, status == UctStatus.OK ? null : "its flush completed with " + UctStatus.describe(status));
    }

    /**
     * The first {@code n} of the lane's awaiting operations are answered: applied (a UCT flush after
     * them completed well), else unknown (UCT had taken them).
     *
     * @param failure why they are unknown, or null
     */
    private void flushed(UcxLane lane, int n, String failure) {
        lane.traffic.coveredByFlush = 0;
        for (int i = 0; i < n; i++) {
            UcxOp op = lane.traffic.awaitingFlush.poll();
            lane.traffic.hardwareInFlight--;
            lane.channel.hardwareCompleted();
            synchronized (lane.ledger) {
                if (lane.answeredLocked(op.token) != null) {
                    if (failure == null) {
                        lane.deliverCompleted(op.token, 0);
                    } else {
                        lane.deliverFailed(op.token, new dev.fenceline.OutcomeUnknownException("ucx: UCT took "
                                + op.kind + " on " + lane + ", and " + failure));
                    }
                }
            }
        }
        if (!lane.traffic.awaitingFlush.isEmpty()) {
            wantFlush(lane);
        }
        path.advance(lane);
        agent.answered(lane);
    }
}
