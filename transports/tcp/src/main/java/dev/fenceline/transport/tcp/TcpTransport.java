package dev.fenceline.transport.tcp;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.ExactlyOnce;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportActors;
import dev.fenceline.spi.TransportContext;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's TCP transport: a listener per configured address (the target side, which applies
 * peers' operations) and the rails its endpoints open to peers (the origin side). All I/O runs on
 * this worker's own event loops, never on the actor system's threads.
 */
final class TcpTransport implements Transport, RailActor.Connector {
    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

    /** A local address and the prefix length of its subnet, to pair rails by network. */
    private record LocalNet(InetSocketAddress address, int prefix) {
    }

    private final TransportContext context;
    private final TcpSettings settings;
    private final Handshake handshake;
    /** Mutual TLS, or null when security = secret. */
    private final TlsContexts tls;
    private final NettyIo io;
    private final LendingEventLoopGroup group;
    private final ChannelGroup channels = new DefaultChannelGroup("fenceline-tcp", GlobalEventExecutor.INSTANCE);
    private final List<LocalNet> locals = new ArrayList<>();
    private final ExactlyOnceWindows windows;
    /** Where active-message handlers run, off the event loops; null when active-message-threads = 0. */
    private final java.util.concurrent.ExecutorService handlers;
    private final ExactlyOnce exactlyOnce;
    private final IncomingCounts incoming;
    /** How the authenticated incoming connections share {@code limits.queued-bytes-total}. */
    private final AnswerShares answerShares;
    private final Handshaking handshaking;
    private volatile boolean closed;
    /** The control actor, once the worker actor started this transport. */
    private volatile org.apache.pekko.actor.typed.ActorRef<TcpTransportActor.Command> actor;

    TcpTransport(TransportContext context, TcpSettings settings) {
        this.context = context;
        this.settings = settings;
        this.incoming = new IncomingCounts(settings.limits().connections(), settings.limits().connectionsPerAddress());
        this.answerShares = new AnswerShares(settings.limits());
        this.handshaking = new Handshaking(settings.limits().preAuthConnections());
        TcpSettings.Security security = settings.security();
        this.handshake = security.key() != null ? Handshake.fromKey(security.key())
                : !security.passphrase().isEmpty() ? Handshake.fromPassphrase(security.passphrase()) : Handshake.TLS_ONLY;
        this.tls = security.tlsOn() ? TlsContexts.create(security.tls(), context.workerName(), settings.connectTimeout()) : null;
        this.io = NettyIo.choose(settings.io(), settings.busyPoll());
        io.checkCongestionControl(settings.congestionControl(), settings.io());
        if (settings.directWrites() && io.epoll() && tls == null) {
            DirectSocket.available(); // binds libc here, not on an event loop at the first lane
        }
        this.windows = context.windows();
        this.exactlyOnce = windows.exactlyOnce();
        long inFlight = (long) settings.maxRails() * settings.queueDepth();
        if (windows.windowSize() < inFlight) {
            throw new dev.fenceline.ConfigurationException("fenceline.exactly-once.window = " + windows.windowSize()
                    + " is invalid with tcp's max-rails = " + settings.maxRails() + " and queue-depth = "
                    + settings.queueDepth() + ": expected at least their product, " + inFlight
                    + ", so every operation the lanes can hold fits");
        }
        this.handlers = settings.activeMessageThreads() == 0 ? null
                : java.util.concurrent.Executors.newFixedThreadPool(settings.activeMessageThreads(),
                        new DefaultThreadFactory("fenceline-tcp-" + context.workerName() + "-handler", true));
        this.group = new LendingEventLoopGroup(settings.ioThreads(),
                new DefaultThreadFactory("fenceline-tcp-" + context.workerName(), true), io.handlers());
        try {
            for (InetSocketAddress a : settings.listen()) {
                Channel server = listen(a);
                InetSocketAddress bound = (InetSocketAddress) server.localAddress();
                locals.add(new LocalNet(bound, prefixOf(bound.getAddress())));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        LOG.debug("tcp {}: listening on {} ({}, {})", context.workerName(), locals, io.epoll() ? "epoll" : "nio",
                tls != null ? tls : "secret handshake, frames in clear");
    }

    private Channel listen(InetSocketAddress a) {
        ServerBootstrap b = new ServerBootstrap().group(group).channel(io.serverChannel())
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (!admitted(ch)) {
                            ch.close();
                            return;
                        }
                        channels.add(ch);
                        io.congestionControl(ch, settings.congestionControl());
                        if (tls != null) {
                            ch.pipeline().addLast(tls.server(ch));
                        }
                        ch.pipeline().addLast(new FrameSplitter(maxFrame(), settings.limits().preAuthFrame()),
                                new TargetHandler(TcpTransport.this));
                    }
                });
        io.childOptions(b, settings);
        int queued = settings.limits().queuedBytes();
        b.childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(queued / 2, queued));
        ChannelFuture f = b.bind(a).awaitUninterruptibly(); // at worker start, outside any actor
        if (!f.isSuccess()) {
            throw new FencelineException("tcp: worker '" + context.workerName() + "' cannot listen on " + a + ": "
                    + f.cause(), f.cause());
        }
        channels.add(f.channel());
        return f.channel();
    }

    /**
     * The origin's frames: bigger than the largest legal one end the connection
     * (TooLongFrameException), and until the server has proved itself (WELCOME), bigger than a
     * handshake frame too: whatever answers the dial cannot make this side buffer a fragment. A
     * REFUSE's reason always fits, so a refusal is read whole.
     */
    FrameSplitter frames() {
        return new FrameSplitter(maxFrame(), Math.max(settings.limits().preAuthFrame(), REFUSE_FRAME));
    }

    /** The largest REFUSE: length prefix, header, reason length, reason. */
    private static final int REFUSE_FRAME = Wire.LENGTH_FIELD + Wire.FRAME_HEADER + 2 + Wire.MAX_REASON_BYTES;

    private int maxFrame() {
        return Wire.LENGTH_FIELD + Wire.FRAME_HEADER + 64 + Math.max(settings.maxFragment(), 2 * Wire.MAX_REASON_BYTES);
    }

    // ------------------------------------------------------------------ connection limits

    private final java.util.concurrent.atomic.AtomicLong refused = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong pushedOut = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong pushOutLogged = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong refusalLogged = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Counts an incoming connection against the transport's and its address's limits; one over a
     * limit is refused (the caller closes it), and a closed one is counted off.
     */
    private boolean admitted(Channel ch) {
        InetAddress from = ch.remoteAddress() instanceof InetSocketAddress a ? a.getAddress()
                : InetAddress.getLoopbackAddress();
        IncomingCounts.Refusal no = incoming.admit(from);
        TcpSettings.Limits limits = settings.limits();
        if (no != null && no.inAll() >= limits.connections() && no.fromAddress() < limits.connectionsPerAddress()) {
            // Full in all: a connection still handshaking gives way to this one, or connections that
            // never authenticate (up to pre-auth-connections of them) would keep every peer out.
            Channel oldest = handshaking.pushOut();
            if (oldest != null) {
                pushOut(oldest);
                incoming.admitInPlaceOfAnother(from);
                no = null;
            }
        }
        if (no != null) {
            TcpSettings.Limits l = limits;
            long n = refused.incrementAndGet();
            long now = System.nanoTime();
            long last = refusalLogged.get();
            if (now - last > l.refusalLogInterval().toNanos() && refusalLogged.compareAndSet(last, now)) {
                LOG.warn("tcp {}: refused a connection from {}: {} incoming connections (limit {}), {} from that"
                        + " address (limit {}); {} refused so far", context.workerName(), from, no.inAll(),
                        l.connections(), no.fromAddress(), l.connectionsPerAddress(), n);
            }
            return false;
        }
        ch.closeFuture().addListener(f -> {
            incoming.closed(from);
            handshaking.done(ch);
        });
        Channel oldest = handshaking.admit(ch, from);
        if (oldest != null) {
            pushOut(oldest);
        }
        return true;
    }

    /**
     * Closes a connection still handshaking (the oldest of the address with the most handshaking) to
     * make room for a newer one; a warning at most once per interval.
     */
    private void pushOut(Channel oldest) {
        long n = pushedOut.incrementAndGet();
        long now = System.nanoTime();
        long last = pushOutLogged.get();
        if (now - last > settings.limits().refusalLogInterval().toNanos() && pushOutLogged.compareAndSet(last, now)) {
            LOG.warn("tcp {}: closed the connection from {} that had handshaken longest of its address's, for a"
                    + " newer one (limits: pre-auth-connections = {}, connections = {}); {} closed so far",
                    context.workerName(),
                    oldest.remoteAddress(), settings.limits().preAuthConnections(), settings.limits().connections(), n);
        }
        oldest.close();
    }

    /**
     * A connection's peer authenticated: it no longer counts among those handshaking.
     *
     * @param ch the connection
     * @return false if it was pushed out meanwhile (it is being closed): it must not be welcomed
     */
    boolean authenticated(Channel ch) {
        return handshaking.done(ch);
    }

    /** @return how the authenticated incoming connections share {@code limits.queued-bytes-total} */
    AnswerShares answerShares() {
        return answerShares;
    }

    /** @return connections closed because newer ones were handshaking (tests) */
    long pushedOut() {
        return pushedOut.get();
    }

    /** @return the listeners and every connection made or accepted, until it closes (tests) */
    ChannelGroup channels() {
        return channels;
    }

    /** @return incoming connections refused by the limits so far (tests) */
    long refusedConnections() {
        return refused.get();
    }

    private static int prefixOf(InetAddress a) {
        try {
            NetworkInterface nif = NetworkInterface.getByInetAddress(a);
            if (nif != null) {
                for (InterfaceAddress ia : nif.getInterfaceAddresses()) {
                    if (ia.getAddress().equals(a)) {
                        return ia.getNetworkPrefixLength();
                    }
                }
            }
        } catch (SocketException e) {
            LOG.debug("tcp: no interface information for {}: {}", a, e.toString());
        }
        return a.getAddress().length * 8; // unknown: only the address itself
    }

    static boolean sameNetwork(InetAddress a, InetAddress b, int prefix) {
        byte[] x = a.getAddress();
        byte[] y = b.getAddress();
        if (x.length != y.length) {
            return false;
        }
        for (int bit = 0; bit < Math.min(prefix, x.length * 8); bit += 8) {
            int bits = Math.min(8, prefix - bit);
            int mask = (0xFF << (8 - bits)) & 0xFF;
            if ((x[bit / 8] & mask) != (y[bit / 8] & mask)) {
                return false;
            }
        }
        return true;
    }

    /** The local address to connect to {@code remote} from: the same address, else one on its subnet. */
    private InetSocketAddress localFor(InetSocketAddress remote) {
        for (LocalNet l : locals) {
            if (l.address().getAddress().equals(remote.getAddress())) {
                return l.address();
            }
        }
        for (LocalNet l : locals) {
            if (sameNetwork(l.address().getAddress(), remote.getAddress(), l.prefix())) {
                return l.address();
            }
        }
        return null;
    }

    UUID workerId() {
        return context.workerId();
    }

    @Override
    public String workerName() {
        return context.workerName();
    }

    TcpSettings settings() {
        return settings;
    }

    Handshake handshake() {
        return handshake;
    }

    /** @return where active-message handlers run, or null for the event loop itself */
    java.util.concurrent.Executor handlers() {
        return handlers;
    }

    /** @return the worker's exactly-once windows */
    ExactlyOnceWindows windows() {
        return windows;
    }

    ExactlyOnce exactlyOnce() {
        return exactlyOnce;
    }

    RemoteAccessTarget target() {
        return context.target();
    }

    @Override
    public boolean closed() {
        return closed;
    }

    @Override
    public String name() {
        return TcpTransportProvider.NAME;
    }

    @Override
    public byte[] localAddress() {
        return TcpAddress.encode(locals.stream().map(LocalNet::address).toList());
    }

    @Override
    public CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress) {
        List<InetSocketAddress> remotes;
        try {
            remotes = TcpAddress.decode(peerAddress);
        } catch (FencelineException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (remotes.size() > settings.maxRails()) {
            remotes = remotes.subList(0, settings.maxRails());
        }
        org.apache.pekko.actor.typed.ActorRef<TcpTransportActor.Command> a = actor;
        if (a == null) {
            return CompletableFuture.failedFuture(new FencelineException("tcp: worker '" + context.workerName()
                    + "' never started this transport (the worker actor starts it)"));
        }
        if (closed) {
            return CompletableFuture.failedFuture(new EndpointFailedException("tcp: the transport is closed"));
        }
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new TcpTransportActor.Connect(peerId, List.copyOf(remotes), result));
        return result;
    }

    @Override
    public void start(TransportActors actors) {
        actor = actors.spawn(TcpTransportActor.create(this, this::localFor, settings.reconnectPolicy(),
                settings.connectTimeout()), "control");
    }

    /**
     * Opens and authenticates one connection on {@code rail}; completes with the ready lane. The rail
     * bounds the attempt: completing the future exceptionally closes the connection.
     */
    @Override
    public CompletableFuture<TcpLane> open(Rail rail) {
        CompletableFuture<TcpLane> ready = new CompletableFuture<>();
        if (closed) {
            ready.completeExceptionally(new EndpointFailedException("tcp: the transport is closed"));
            return ready;
        }
        Bootstrap b = new Bootstrap().group(group).channel(io.channel()).handler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                channels.add(ch);
                try {
                    io.congestionControl(ch, settings.congestionControl());
                } catch (io.netty.channel.ChannelException e) { // the rail hears why, not only the log
                    ready.completeExceptionally(new EndpointFailedException("tcp: connect " + rail.local() + " -> "
                            + rail.remote() + " failed: " + e.getMessage(), e));
                    ch.close();
                    return;
                }
                if (tls != null) {
                    ch.pipeline().addLast(tls.client(ch, rail.remote()));
                }
                ch.pipeline().addLast(frames(), new LaneHandler(TcpTransport.this, rail, ready));
            }
        });
        io.clientOptions(b, settings);
        ChannelFuture f;
        try {
            f = rail.local() == null ? b.connect(rail.remote())
                    : b.connect(rail.remote(), new InetSocketAddress(rail.local().getAddress(), 0));
        } catch (RejectedExecutionException e) {
            ready.completeExceptionally(new EndpointFailedException("tcp: the transport is closed"));
            return ready;
        }
        f.addListener(done -> {
            if (!done.isSuccess()) {
                ready.completeExceptionally(new EndpointFailedException("tcp: connect " + rail.local() + " -> "
                        + rail.remote() + " failed: " + done.cause(), done.cause()));
            }
        });
        Channel ch = f.channel();
        ready.whenComplete((lane, error) -> {
            if (error != null) {
                ch.close();
            }
        });
        return ready;
    }

    /** Lends every event loop of this worker's (see {@link LendingEventLoop}). */
    @Override
    public dev.fenceline.CallerProgress progressHere() {
        if (closed) {
            throw new IllegalStateException("tcp " + context.workerName() + ": the transport is closed");
        }
        List<LendingEventLoop.Loan> loans = new ArrayList<>();
        Runnable pollTaken = () -> { // the loops lent so far are served while the next one hands over
            for (LendingEventLoop.Loan l : loans) {
                l.progress();
            }
        };
        try {
            for (LendingEventLoop loop : group.loops()) {
                loans.add(loop.lend(pollTaken));
            }
        } catch (RuntimeException e) {
            for (LendingEventLoop.Loan l : loans) {
                l.close();
            }
            throw e;
        }
        return dev.fenceline.spi.support.CombinedProgress.of(loans);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        org.apache.pekko.actor.typed.ActorRef<TcpTransportActor.Command> a = actor;
        if (a != null) {
            a.tell(TcpTransportActor.Shutdown.INSTANCE); // stops the rails; the worker stopping does too
        }
        channels.close();
        group.shutdownGracefully(0, settings.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS);
        if (handlers != null) {
            handlers.shutdown(); // a handler still running finishes on its own; its answer has nowhere to go
        }
    }
}
