package dev.fenceline.transport.ucx;

import java.util.ArrayList;
import java.util.List;

/**
 * A connect on its way (wireup, on the progress agent: {@link UcxDials}): its lanes, and what it
 * waits for.
 */
final class UcxDialing {
    /** The transport actor's id for it (its CONNECT carries another, drawn at random by the wiring). */
    final long dial;
    final UcxPeer peer;
    final List<UcxLane> lanes;
    final List<UcxChannel> channels;
    /** Those of its channels the CONNECT makes (the rest exist): a refusal ends the target's ends of these. */
    final List<UcxChannel> made;
    /** For a replacement or reconnect: the lane the new one takes over from; null for an endpoint's connect. */
    final UcxLane replaces;
    /** Those of its channels the peer dialed, that the CONNECT names for its lanes ({@link UcxWireup.Mode#REVERSE}). */
    final List<UcxChannel> reversed;
    /** Whether it reconnects a failed lane ({@link UcxRecovery}) rather than replacing a live one. */
    final boolean recovery;
    /** An endpoint's connect: what it dials again, where the peer refused a channel it dialed. Else null. */
    final UcxCommand.Dial command;
    boolean answered;

    UcxDialing(long dial, UcxPeer peer, List<UcxLane> lanes, List<UcxChannel> channels,
            List<UcxWireup.Channel> wired, UcxLane replaces, boolean recovery, UcxCommand.Dial command) {
        this.dial = dial;
        this.peer = peer;
        this.lanes = lanes;
        this.channels = channels;
        List<UcxChannel> m = new ArrayList<>();
        List<UcxChannel> r = new ArrayList<>();
        for (int i = 0; i < channels.size(); i++) {
            if (wired.get(i).mode().made()) {
                m.add(channels.get(i));
            } else if (wired.get(i).mode() == UcxWireup.Mode.REVERSE) {
                r.add(channels.get(i));
            }
        }
        this.made = m;
        this.reversed = r;
        this.replaces = replaces;
        this.recovery = recovery;
        this.command = command;
    }
}
