package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The wireup messages (UCT active-message id {@link UcxWire#AM_WIREUP}), as records with a strict
 * codec: what a peer sent decodes within bounds or is refused with a {@link FencelineException}.
 *
 * <p>A connect from an origin worker to a target worker: the origin sends {@link Connect} on its
 * wireup channel (the first channel to the peer that connects to the peer's interface and carries
 * active messages), naming its address (so the target can answer), the channels the connect's
 * lanes use (new ones with, for endpoint-to-endpoint transports, the origin endpoint's address; or
 * ones set up by an earlier connect) and the lanes' connection ids. The target makes its end of each
 * new channel and answers {@link Connected} with its endpoints' addresses, or {@link Refused}.
 * For an endpoint-to-endpoint channel the origin then connects its endpoint and repeats
 * {@link Hello} on it until the target's {@link HelloAck} comes back on the same pair: only then are
 * both directions up (UCT's tcp drops what one side sends behind its connection request).
 * {@link Bye} tells the target a lane is closed; {@link Leaving}, that the sending worker closed.
 */
final class UcxWireup {
    private static final byte CONNECT = 1;
    private static final byte CONNECTED = 2;
    private static final byte REFUSED = 3;
    private static final byte HELLO = 4;
    private static final byte HELLO_ACK = 5;
    private static final byte BYE = 6;
    private static final byte LEAVING = 7;
    /**
     * The wire protocol's version, in every worker address and CONNECT: 2, a request's flags and
     * EXPEDITE, several answers in one reply message; 3, the address carries it (an origin refuses a
     * target of another version before it sends anything); 4, SHORT MESSAGE (UCT message id 4); 5,
     * a channel the target dialed carries the origin's lanes too ({@link Mode#REVERSE}); 6, a CONNECT
     * that makes channels on shared memory comes over shared memory ({@link UcxLanePlanner#wireupCandidate});
     * 7, a CONNECTED says the largest get the target answers on each lane ({@link Connected#maxGets}).
     */
    static final byte VERSION = 7;

    /** More channels than a connect names: one per iface. */
    static final int MAX_CHANNELS = UcxAddress.MAX_IFACES;
    /** More lanes than one connect opens (an endpoint has at most 64). */
    static final int MAX_LANES = 64;
    /**
     * The smallest get bound a CONNECTED may give for a lane that carries messages: UCT's copied
     * messages carry kilobytes everywhere, so less is a broken or hostile target, which would have
     * the origin split every operation into pieces of a few bytes.
     */
    static final int MIN_GET_BOUND = 1 << 10;
    /** A UCT endpoint address longer than this is not one. */
    static final int MAX_EP_ADDRESS = 1024;
    /** The longest refusal text. */
    static final int MAX_TEXT = 1024;

    /** A wireup message. */
    sealed interface Message {
    }

    /** @return a peer's text (a refusal's reason) as it may go into this worker's log: cut short, no control characters */
    static String printable(String s) {
        String cut = s.length() > 200 ? s.substring(0, 200) + "..." : s;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }

    /** How the target makes its end of a channel. */
    enum Mode {
        /** To the origin's iface: a reply endpoint of its own. */
        IFACE,
        /** Endpoint to endpoint: connected to the origin endpoint whose address comes along. */
        ENDPOINT,
        /** Set up by an earlier connect of the same origin. */
        EXISTING,
        /**
         * The target's own channel to the origin (the target dialed it, to the origin's iface): the
         * origin's end of it carries the origin's lanes too, and the target answers them on it, so
         * that both workers' requests and answers between the two ifaces share one UCT endpoint on
         * each side (over tcp one connection, whose messages each way carry the other way's
         * acknowledgements).
         */
        REVERSE;

        /** @return whether the target makes its end of the channel for this connect */
        boolean made() {
            return this == IFACE || this == ENDPOINT;
        }
    }

    /**
     * One channel a connect's lanes use.
     *
     * @param id the channel's id (the origin's, unguessable)
     * @param originIface the origin's iface, an index into its address's ifaces
     * @param targetIface the target's iface, an index into the target's address's ifaces
     * @param mode how the target makes its end
     * @param endpoint the origin endpoint's address, for {@link Mode#ENDPOINT}; else empty
     */
    record Channel(long id, int originIface, int targetIface, Mode mode, byte[] endpoint) {
        /** Checks the bounds. */
        Channel {
            if (originIface < 0 || originIface >= UcxAddress.MAX_IFACES || targetIface < 0
                    || targetIface >= UcxAddress.MAX_IFACES || endpoint.length > MAX_EP_ADDRESS
                    || (mode == Mode.ENDPOINT) != (endpoint.length > 0)) {
                throw new IllegalArgumentException("channel " + Long.toHexString(id) + ": ifaces " + originIface + ", "
                        + targetIface + ", " + mode + " with an endpoint address of " + endpoint.length + " bytes");
            }
            endpoint = endpoint.clone();
        }
    }

    /**
     * One lane a connect opens.
     *
     * @param conn its connection id (unguessable)
     * @param channel the index of its channel in the connect's list
     */
    record Lane(long conn, int channel) {
    }

    /**
     * A connect.
     *
     * @param dial the connect's id, echoed in the answer
     * @param worker the origin worker's id
     * @param address the origin's encoded {@link UcxAddress}
     * @param channels the channels, the wireup channel first
     * @param lanes the lanes
     */
    record Connect(long dial, UUID worker, byte[] address, List<Channel> channels, List<Lane> lanes)
            implements Message {
        /** Checks the bounds. */
        Connect {
            if (channels.isEmpty() || channels.size() > MAX_CHANNELS || lanes.size() > MAX_LANES
                    || address.length > 0xffff) {
                throw new IllegalArgumentException(channels.size() + " channels, " + lanes.size() + " lanes, an address of "
                        + address.length + " bytes");
            }
            for (Lane l : lanes) {
                if (l.channel() < 0 || l.channel() >= channels.size()) {
                    throw new IllegalArgumentException("a lane on channel " + l.channel() + " of " + channels.size());
                }
            }
            address = address.clone();
            channels = List.copyOf(channels);
            lanes = List.copyOf(lanes);
        }
    }

    /**
     * The target's end of each new channel.
     *
     * @param id the channel
     * @param endpoint the target endpoint's address for an endpoint-to-endpoint channel; else empty
     */
    record End(long id, byte[] endpoint) {
        /** Checks the bounds. */
        End {
            if (endpoint.length > MAX_EP_ADDRESS) {
                throw new IllegalArgumentException("an endpoint address of " + endpoint.length + " bytes");
            }
            endpoint = endpoint.clone();
        }
    }

    /**
     * The target took a connect.
     *
     * @param dial the connect
     * @param ends its end of each channel the connect named, in order
     * @param maxGets for each lane the connect opened, in order, the largest get (in bytes) the target
     *     answers on it in one reply: what the channel its replies go on carries, which a target whose
     *     UCT was configured otherwise may make less than the origin's own bound
     */
    record Connected(long dial, List<End> ends, List<Integer> maxGets) implements Message {
        /** Checks the bounds. */
        Connected {
            if (ends.size() > MAX_CHANNELS) {
                throw new IllegalArgumentException(ends.size() + " channel ends");
            }
            if (maxGets.size() > MAX_LANES || maxGets.stream().anyMatch(g -> g < 0)) {
                throw new IllegalArgumentException("get bounds " + maxGets);
            }
            ends = List.copyOf(ends);
            maxGets = List.copyOf(maxGets);
        }

        /**
         * @param messages for each lane of the connect, whether its operations may go as messages
         *     (only their bound matters)
         * @return what makes the get bounds unusable for those lanes (too few or too many, or a bound
         *     below what any UCT message carries), in words; null if they are fine
         */
        String unusableFor(boolean[] messages) {
            if (maxGets.size() != messages.length) {
                return "get bounds for " + maxGets.size() + " lane(s), where it opened " + messages.length;
            }
            for (int i = 0; i < messages.length; i++) {
                if (messages[i] && maxGets.get(i) < MIN_GET_BOUND) {
                    return "gets of at most " + maxGets.get(i) + " bytes on lane " + i + ", below the "
                            + MIN_GET_BOUND + " any UCT message carries";
                }
            }
            return null;
        }
    }

    /**
     * The target refused a connect.
     *
     * @param dial the connect
     * @param notOwnChannel whether it named as the target's own ({@link Mode#REVERSE}) a channel the
     *     target does not have to the sender: the sender dials again on channels of its own
     * @param reason why, in words
     */
    record Refused(long dial, boolean notOwnChannel, String reason) implements Message {
    }

    /**
     * The origin's greeting on an endpoint-to-endpoint channel, repeated until answered.
     *
     * @param channel the channel
     */
    record Hello(long channel) implements Message {
    }

    /**
     * The target heard the greeting: the channel is up both ways.
     *
     * @param channel the channel
     */
    record HelloAck(long channel) implements Message {
    }

    /**
     * The origin closed a lane.
     *
     * @param conn the lane's connection id
     */
    record Bye(long conn) implements Message {
    }

    /**
     * The sending worker closed: it applies nothing more. Naming a channel whose id the receiver
     * drew (unguessable, told to the sender alone) it parts the two whole; naming one it drew itself
     * it ends that channel only, since anyone may make channels in a worker's name.
     *
     * @param worker the closing worker's id
     * @param channel a channel between it and the receiver
     */
    record Leaving(UUID worker, long channel) implements Message {
    }

    private UcxWireup() {
    }

    static byte[] encode(Message m) {
        ByteBuffer out = ByteBuffer.allocate(size(m)).order(ByteOrder.nativeOrder());
        if (m instanceof Connect c) {
            out.put(CONNECT).put(VERSION).putLong(c.dial()).putLong(c.worker().getMostSignificantBits())
                    .putLong(c.worker().getLeastSignificantBits()).putShort((short) c.address().length)
                    .put(c.address()).put((byte) c.channels().size());
            for (Channel ch : c.channels()) {
                out.putLong(ch.id()).put((byte) ch.originIface()).put((byte) ch.targetIface())
                        .put((byte) ch.mode().ordinal()).putShort((short) ch.endpoint().length).put(ch.endpoint());
            }
            out.put((byte) c.lanes().size());
            for (Lane l : c.lanes()) {
                out.putLong(l.conn()).put((byte) l.channel());
            }
        } else if (m instanceof Connected c) {
            out.put(CONNECTED).putLong(c.dial()).put((byte) c.ends().size());
            for (End e : c.ends()) {
                out.putLong(e.id()).putShort((short) e.endpoint().length).put(e.endpoint());
            }
            out.put((byte) c.maxGets().size());
            for (int g : c.maxGets()) {
                out.putInt(g);
            }
        } else if (m instanceof Refused r) {
            byte[] t = text(r.reason());
            out.put(REFUSED).putLong(r.dial()).put((byte) (r.notOwnChannel() ? 1 : 0)).putShort((short) t.length).put(t);
        } else if (m instanceof Hello h) {
            out.put(HELLO).putLong(h.channel());
        } else if (m instanceof HelloAck h) {
            out.put(HELLO_ACK).putLong(h.channel());
        } else if (m instanceof Bye b) {
            out.put(BYE).putLong(b.conn());
        } else if (m instanceof Leaving l) {
            out.put(LEAVING).putLong(l.worker().getMostSignificantBits()).putLong(l.worker().getLeastSignificantBits())
                    .putLong(l.channel());
        }
        return out.array();
    }

    private static int size(Message m) {
        if (m instanceof Connect c) {
            int n = 2 + 8 + 16 + 2 + c.address().length + 1 + 1;
            for (Channel ch : c.channels()) {
                n += 8 + 3 + 2 + ch.endpoint().length;
            }
            return n + 9 * c.lanes().size();
        }
        if (m instanceof Connected c) {
            int n = 1 + 8 + 1 + 1 + 4 * c.maxGets().size();
            for (End e : c.ends()) {
                n += 8 + 2 + e.endpoint().length;
            }
            return n;
        }
        if (m instanceof Refused r) {
            return 1 + 8 + 1 + 2 + text(r.reason()).length;
        }
        if (m instanceof Leaving) {
            return 1 + 16 + 8;
        }
        return 9; // Hello, HelloAck, Bye
    }

    private static byte[] text(String s) {
        byte[] t = s.getBytes(StandardCharsets.UTF_8);
        return t.length <= MAX_TEXT ? t : java.util.Arrays.copyOf(t, MAX_TEXT);
    }

    /**
     * @param in a wireup message as a peer sent it (position to limit)
     * @return the message
     * @throws FencelineException naming what is wrong, for anything malformed
     */
    static Message decode(ByteBuffer in) {
        in = in.slice().order(ByteOrder.nativeOrder());
        int length = in.remaining();
        try {
            byte type = in.get();
            Message m = switch (type) {
                case CONNECT -> connect(in);
                case CONNECTED -> {
                    long dial = in.getLong();
                    int n = Byte.toUnsignedInt(in.get());
                    if (n > MAX_CHANNELS) {
                        throw new FencelineException("ucx: a CONNECTED with " + n + " channels, at most " + MAX_CHANNELS);
                    }
                    List<End> ends = new ArrayList<>(n);
                    for (int k = 0; k < n; k++) {
                        ends.add(new End(in.getLong(), bytes(in, MAX_EP_ADDRESS, "endpoint address")));
                    }
                    int lanes = Byte.toUnsignedInt(in.get());
                    if (lanes > MAX_LANES) {
                        throw new FencelineException("ucx: a CONNECTED with get bounds for " + lanes + " lanes, at most "
                                + MAX_LANES);
                    }
                    List<Integer> gets = new ArrayList<>(lanes);
                    for (int k = 0; k < lanes; k++) {
                        int g = in.getInt();
                        if (g < 0) {
                            throw new FencelineException("ucx: a CONNECTED whose lane " + k + " takes gets of at most " + g
                                    + " bytes");
                        }
                        gets.add(g);
                    }
                    yield new Connected(dial, ends, gets);
                }
                case REFUSED -> {
                    long dial = in.getLong();
                    int notOwn = Byte.toUnsignedInt(in.get());
                    if (notOwn > 1) {
                        throw new FencelineException("ucx: a REFUSED whose channel flag is " + notOwn + " (0 or 1)");
                    }
                    yield new Refused(dial, notOwn == 1, new String(bytes(in, MAX_TEXT, "refusal"), StandardCharsets.UTF_8));
                }
                case HELLO -> new Hello(in.getLong());
                case HELLO_ACK -> new HelloAck(in.getLong());
                case BYE -> new Bye(in.getLong());
                case LEAVING -> new Leaving(new UUID(in.getLong(), in.getLong()), in.getLong());
                default -> throw new FencelineException("ucx: a wireup message of unknown type " + type);
            };
            if (in.hasRemaining()) {
                throw new FencelineException("ucx: a wireup message with " + in.remaining() + " bytes after its end");
            }
            return m;
        } catch (BufferUnderflowException e) {
            throw new FencelineException("ucx: a truncated wireup message (" + length + " bytes)");
        } catch (IllegalArgumentException e) {
            throw new FencelineException("ucx: a malformed wireup message (" + e.getMessage() + ")");
        }
    }

    private static Connect connect(ByteBuffer in) {
        byte version = in.get();
        if (version != VERSION) {
            throw new FencelineException("ucx: a CONNECT of version " + version + ", this worker speaks " + VERSION);
        }
        long dial = in.getLong();
        UUID worker = new UUID(in.getLong(), in.getLong());
        byte[] address = bytes(in, 0xffff, "address");
        int n = Byte.toUnsignedInt(in.get());
        if (n == 0 || n > MAX_CHANNELS) {
            throw new FencelineException("ucx: a CONNECT with " + n + " channels (1 to " + MAX_CHANNELS + ")");
        }
        List<Channel> channels = new ArrayList<>(n);
        Mode[] modes = Mode.values();
        for (int k = 0; k < n; k++) {
            long id = in.getLong();
            int originIface = Byte.toUnsignedInt(in.get());
            int targetIface = Byte.toUnsignedInt(in.get());
            int mode = Byte.toUnsignedInt(in.get());
            if (mode >= modes.length) {
                throw new FencelineException("ucx: a CONNECT's channel of unknown mode " + mode);
            }
            channels.add(new Channel(id, originIface, targetIface, modes[mode], bytes(in, MAX_EP_ADDRESS,
                    "endpoint address")));
        }
        int lanes = Byte.toUnsignedInt(in.get());
        if (lanes > MAX_LANES) {
            throw new FencelineException("ucx: a CONNECT with " + lanes + " lanes, at most " + MAX_LANES);
        }
        List<Lane> list = new ArrayList<>(lanes);
        for (int k = 0; k < lanes; k++) {
            list.add(new Lane(in.getLong(), Byte.toUnsignedInt(in.get())));
        }
        return new Connect(dial, worker, address, channels, list);
    }

    private static byte[] bytes(ByteBuffer in, int max, String what) {
        int n = Short.toUnsignedInt(in.getShort());
        if (n > max) {
            throw new FencelineException("ucx: a wireup " + what + " of " + n + " bytes, at most " + max);
        }
        byte[] b = new byte[n];
        in.get(b);
        return b;
    }
}
