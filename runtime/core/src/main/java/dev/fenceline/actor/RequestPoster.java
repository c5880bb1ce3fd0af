package dev.fenceline.actor;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.spi.LaneCapabilities;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.Protocol;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.Protocols;
import java.nio.ByteBuffer;

/**
 * Turns an admitted request into transport operations on its lane: split into fragments at what
 * the lane's capabilities allow (the same byte ranges again after a restart), each numbered for
 * exactly-once from the request's first sequence number, tracked in flight, counted and posted.
 * Owned by the endpoint actor, with {@link Operations}.
 */
final class RequestPoster {
    /** What becomes of a request that ends while it is being posted. */
    interface Outcomes {
        /** Completes a request with nothing (left) to post. */
        void complete(Request r, long value, FencelineException error);

        /** Fails a request that cannot go on its lane. */
        void refuse(Request r, FencelineException e);
    }

    private final FencelineSettings settings;
    private final EndpointChannel channel;
    private final LaneSlots slots;
    private final InflightTable inflight;
    private final Outcomes outcomes;

    RequestPoster(FencelineSettings settings, EndpointChannel channel, LaneSlots slots, InflightTable inflight,
            Outcomes outcomes) {
        this.settings = settings;
        this.channel = channel;
        this.slots = slots;
        this.inflight = inflight;
        this.outcomes = outcomes;
    }

    /** Posts a request's fragments (after a restart, just those it names) on its lane. */
    void post(Request r) {
        r.posted = true;
        channel.laneCounters().add(r.lane, LaneCounters.Counter.OPERATIONS, 1);
        LaneConnection conn = slots.table().connection(r.lane);
        int[] only = r.resend;
        r.resend = null;
        LaneCapabilities caps = capabilities(r.lane, conn);
        switch (r.kind) {
            case PUT, GET -> {
                ByteBuffer local = r.local;
                int total = local.remaining();
                // Only a lane whose zero-copy needs registered memory pays for the lookup.
                RegionHandle handle = caps.zcopyNeedsRegisteredLocal() && caps.maxZcopy() > 0
                        ? channel.localRegions().handle(local, conn.transport()) : null;
                int usable = Protocols.maxPayload(caps, handle != null);
                if (r.fragmentSize == 0) {
                    r.fragmentSize = Math.max(1, Math.min(settings.fragmentSize(), usable));
                } else if (usable < r.fragmentSize) {
                    // A restart must resend the same byte ranges under the same sequence numbers.
                    outcomes.refuse(r, new EndpointFailedException("endpoint " + channel.name() + ": " + r + " was split"
                            + " into fragments of " + r.fragmentSize + " bytes, but lane " + r.lane + " takes at most "
                            + usable + " after a reconfiguration"));
                    return;
                }
                int frag = r.fragmentSize;
                int n = total == 0 ? 0 : (total + frag - 1) / frag;
                if (n == 0) {
                    outcomes.complete(r, 0, null);
                    return;
                }
                inflight.number(r, n);
                TransportOp.Kind kind = r.kind == Request.Kind.PUT ? TransportOp.Kind.PUT : TransportOp.Kind.GET;
                int count = only == null ? n : only.length;
                for (int k = 0; k < count && !r.done; k++) {
                    int fragment = only == null ? k : only[k];
                    int off = fragment * frag;
                    int len = Math.min(frag, total - off);
                    postOp(r, fragment, TransportOp.rma(kind, slots.nextToken(), r.remoteAddress + off, r.key,
                            local.slice(local.position() + off, len)).localHandle(handle)
                            .protocol(Protocols.rma(len, caps, handle != null)));
                }
            }
            case ATOMIC_POST, ATOMIC_FETCH, CSWAP -> {
                inflight.number(r, 1);
                TransportOp.Kind kind = r.kind == Request.Kind.ATOMIC_POST ? TransportOp.Kind.ATOMIC_POST
                        : r.kind == Request.Kind.ATOMIC_FETCH ? TransportOp.Kind.ATOMIC_FETCH : TransportOp.Kind.CSWAP;
                TransportOp op = TransportOp.atomic(kind, slots.nextToken(), r.remoteAddress, r.key, r.atomicOp,
                        r.width, r.operand, r.compare);
                postOp(r, 0, op.protocol(Protocols.choose(op, caps, false)));
            }
            case AM -> {
                inflight.number(r, 1);
                postOp(r, 0, TransportOp.activeMessage(slots.nextToken(), r.amId, r.header, r.local)
                        .protocol(Protocol.ACTIVE_MESSAGE));
            }
            default -> throw new IllegalStateException("cannot post " + r);
        }
    }

    /**
     * Each lane's capabilities, read once per connection (a slot's connection changes on failover);
     * grown to the slots used rather than sized for the most an endpoint may have.
     */
    private LaneConnection[] capabilitiesOf = NO_CONNECTIONS;
    private static final LaneConnection[] NO_CONNECTIONS = new LaneConnection[0];
    private LaneCapabilities[] capabilities = new LaneCapabilities[0];

    private LaneCapabilities capabilities(int lane, LaneConnection conn) {
        if (lane >= capabilitiesOf.length) {
            capabilitiesOf = java.util.Arrays.copyOf(capabilitiesOf, lane + 1);
            capabilities = java.util.Arrays.copyOf(capabilities, lane + 1);
        }
        if (capabilitiesOf[lane] != conn) {
            capabilities[lane] = conn.capabilities();
            capabilitiesOf[lane] = conn;
        }
        return capabilities[lane];
    }

    private void postOp(Request r, int fragment, TransportOp op) {
        op.identify(channel.endpointId(), r.firstSn + fragment, inflight.lowWater());
        op.mayHaveApplied(r.riskScope != null || r.stillApplyScope != null);
        LaneConnection conn = slots.table().connection(r.lane);
        if (r.trace != null) {
            op.trace(r.trace);
            r.trace.admitted(r.lane, op.sequence(), conn.deduplicates(), conn.reportsVisibility());
        }
        inflight.track(op.token(), new InflightTable.Fragment(r, fragment, r.lane, conn.id(), conn.exactlyOnceScope()));
        LaneCounters lanes = channel.laneCounters();
        lanes.add(r.lane, LaneCounters.Counter.FRAGMENTS, 1);
        lanes.add(r.lane, LaneCounters.Counter.BYTES, op.bytes());
        slots.post(r.lane, op);
    }
}
