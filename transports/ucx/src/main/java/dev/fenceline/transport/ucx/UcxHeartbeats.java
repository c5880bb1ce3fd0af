package dev.fenceline.transport.ucx;

import java.util.ArrayList;
import java.util.List;

/**
 * Keepalive probes of lanes to peers on this host, on the progress agent: each is answered once the
 * peer's heartbeat in its key table has moved since the probe came (the agent reads the table, the
 * only thread that maps and unmaps it). The heartbeat moves while the peer's process runs, even
 * while its progress agent is busy in a slow handler; so a slow handler fails no lane, and a stopped
 * or gone process answers no probe and keepalive fails its lanes.
 */
final class UcxHeartbeats {
    /** A probe and the peer's heartbeat when it came ({@code Long.MIN_VALUE} until read). */
    private static final class Waiting {
        final UcxLane lane;
        final long token;
        long then = Long.MIN_VALUE;

        Waiting(UcxLane lane, long token) {
            this.lane = lane;
            this.token = token;
        }
    }

    private final List<Waiting> waiting = new ArrayList<>();

    /** @param p a probe that came */
    void add(UcxCommand.HeartbeatProbe p) {
        waiting.add(new Waiting(p.lane(), p.token()));
    }

    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /** Answers the probes whose peer beat since they came; drops those of lanes that ended. */
    void answer() {
        for (int i = 0; i < waiting.size();) {
            Waiting w = waiting.get(i);
            KeyTable.View table = w.lane.channel.peer.table;
            if (!w.lane.heartbeatWanted() || table == null) {
                // Ended (the endpoint stopped waiting), or the peer was forgotten (its process went):
                // no answer, and keepalive fails a live lane.
                waiting.remove(i);
                continue;
            }
            long beat = table.heartbeat();
            if (w.then == Long.MIN_VALUE) {
                w.then = beat;
                i++;
            } else if (beat != w.then) {
                waiting.remove(i);
                w.lane.heartbeatAnswered(w.token);
            } else {
                i++;
            }
        }
    }
}
