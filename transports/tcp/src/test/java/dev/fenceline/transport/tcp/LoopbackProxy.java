package dev.fenceline.transport.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay in front of one listening address, standing in for a network path a test can cut
 * (every connection reset, new ones refused until healed) or turn into a black hole (bytes are
 * swallowed, nothing is reset: only a keepalive can tell). Plain blocking sockets on daemon
 * threads: test code, not the data path.
 */
final class LoopbackProxy implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile boolean blackHole;
    private volatile boolean repliesHeld;
    /** Set: the next chunk relayed towards the target gets one bit flipped (an on-path tamperer). */
    private final java.util.concurrent.atomic.AtomicBoolean flipNext = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean closed;

    LoopbackProxy(String bindAddress, InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getByName(bindAddress));
        Thread t = new Thread(this::accept, "proxy-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    /** Resets every relayed connection and refuses new ones. */
    void cut() {
        cut = true;
        for (Socket s : open) {
            try {
                s.setSoLinger(true, 0); // RST, like a peer that vanished
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
        open.clear();
    }

    /** Keeps connections open but delivers nothing in either direction. */
    void blackHole() {
        blackHole = true;
    }

    /** Stops reading what the target sends back (a client that never reads): its socket buffers fill. */
    void holdReplies() {
        repliesHeld = true;
    }

    /** Set: bytes towards the target are kept, not delivered, until {@link #release()} (a stalled target). */
    private volatile boolean holding;

    /**
     * Keeps every byte sent towards the target from now on, as the socket buffers of a stopped
     * target would: the connection looks alive, nothing is answered, and what was sent arrives when
     * {@link #release()} is called, even after the origin closed its end.
     */
    void hold() {
        holding = true;
    }

    /** Delivers what {@link #hold()} kept, in order, and relays normally again. */
    void release() {
        holding = false;
    }

    /** Flips one bit in the middle of the next chunk sent towards the target, once. */
    void flipOneBit() {
        flipNext.set(true);
    }

    void heal() {
        cut = false;
        blackHole = false;
        repliesHeld = false;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket in = server.accept();
                if (cut) {
                    in.setSoLinger(true, 0);
                    in.close();
                    continue;
                }
                Socket out = new Socket();
                out.connect(target, 2000);
                open.add(in);
                open.add(out);
                pump(in, out, false);
                pump(out, in, true);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 << 10];
            java.io.ByteArrayOutputStream kept = new java.io.ByteArrayOutputStream();
            try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
                int n;
                while (true) {
                    while (replies && repliesHeld && !closed) {
                        Thread.sleep(5); // a proxy thread, not an actor: it just stops reading
                    }
                    if (!replies && !holding && kept.size() > 0) {
                        kept.writeTo(o); // a stalled target resumed: what waited arrives first
                        kept.reset();
                    }
                    try {
                        n = i.read(buf);
                    } catch (IOException originGone) {
                        n = -1;
                    }
                    if (n < 0) {
                        while (!replies && holding && !closed) {
                            Thread.sleep(5); // the origin is gone; its bytes still arrive on release
                        }
                        kept.writeTo(o);
                        break;
                    }
                    if (!replies && flipNext.compareAndSet(true, false)) {
                        buf[n / 2] ^= 0x10;
                    }
                    if (!replies && holding) {
                        kept.write(buf, 0, n);
                    } else if (!blackHole) {
                        o.write(buf, 0, n);
                    }
                }
            } catch (IOException ignored) {
                // the other side closed or was cut
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                try {
                    to.close();
                } catch (IOException ignored) {
                    // already closed
                }
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        cut();
        server.close();
    }
}
