package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import java.util.List;
import java.util.UUID;

/** What the wiring ({@link UcxWiring}) reports to the transport actor. */
interface UcxWiringReports {
    void dialed(long dial, List<LaneConnection> lanes);

    void dialFailed(long dial, FencelineException why);

    /** A peer process on this host to watch. */
    void peerSeen(UUID peer, long pid, long start);

    /** A peer whose process was watched is forgotten: its watch goes. */
    void peerForgotten(UUID peer);

    /** The transport stopped for good ({@link UcxFailStop}): its key table's heartbeat stops. */
    void stopped();
}
