package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.LaneListener;

/**
 * What a shm lane's end tells its endpoint about the active messages it sent directly and the
 * operations whose answers the peer held, and when the transport forgets the connection: once no
 * answer is owed any more. Each tells the truth: a message withdrawn before the peer took it did not
 * run; one the peer took and did not answer may have.
 */
final class ShmLaneEnd {
    private ShmLaneEnd() {
    }

    /**
     * The revocation settled the direct messages out (the ledger's fates): each is reported.
     *
     * @param lost whether the peer dropped its answers (they will not come)
     * @param alive whether the peer process lives
     */
    static void directSettled(ShmLane lane, ShmMessageLedger.Fates fates, boolean lost, boolean alive) {
        int directNotTaken = fates.directNotTaken();
        int directStopped = fates.directStopped();
        if (directNotTaken > 0) {
            lane.answers.abandoned(directNotTaken, new EndpointFailedException("shm: " + directNotTaken
                    + " active message(s) sent directly on the lane to " + lane.peer.name + " were withdrawn before"
                    + " the peer took them: not run"));
        }
        if (directStopped > 0) {
            lane.answers.abandoned(directStopped, new OutcomeUnknownException("shm: " + directStopped + " active"
                    + " message(s) sent directly on the lane to " + lane.peer.name + " were taken by the peer, which"
                    + (lost ? " dropped its answers (it reset the connection, answered out of order or with"
                            + " the wrong kind, or this worker's inbox broke)" : alive ? " had not answered when the lane was given up (a handler"
                            + " may still be running)" : " died before it answered")
                    + ": each may or may not have run its handler"));
        }
    }

    /** After the lane was given up: the transport forgets it once no answer is owed any more. */
    static void forgetIfAnswered(ShmLane lane) {
        boolean close;
        synchronized (lane.ledger) {
            close = lane.ledger.takeForgettable();
        }
        if (close) {
            lane.forget();
        }
    }

    /** The lane died: no answer will come for the direct messages still out, nor for the held ones. */
    static void abandonDirect(ShmLane lane, Throwable cause) {
        int n;
        long[] owed;
        synchronized (lane.ledger) {
            n = lane.ledger.abandonDirect();
            owed = lane.ledger.abandonHeld();
        }
        if (n > 0) {
            lane.answers.abandoned(n, new OutcomeUnknownException("shm: " + n + " active message(s) sent directly on"
                    + " the lane to " + lane.peer.name + " got no answer before it failed (" + cause + "): each may or"
                    + " may not have reached its handler"));
        }
        LaneListener l = lane.listenerNow();
        for (long token : owed) { // the endpoint waits for these: it must hear the truth
            l.onFailed(token, new OutcomeUnknownException("shm: " + lane.peer.name + " took this operation and will"
                    + " not answer it (" + cause + "): it may or may not have been applied"));
        }
        forgetIfAnswered(lane);
    }
}
