package dev.fenceline.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.UnixChannel;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import jnr.ffi.LibraryLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lane connection's socket, written by a thread that is not the connection's event loop. It is
 * a duplicate of the channel's descriptor, owned here: the event loop may close the channel's own
 * descriptor at any time (the peer went away), and a write into that number afterwards could reach
 * whatever file or socket reused it. The duplicate stays valid until {@link #close} (run when the
 * channel closes), and a write never overlaps that close. Writes are non-blocking.
 */
final class DirectSocket {
    private static final Logger LOG = LoggerFactory.getLogger(DirectSocket.class);

    /** The one libc call Netty does not offer. */
    public interface LibC {
        /**
         * @param fd a descriptor
         * @return a new descriptor for the same open file, or -1
         */
        int dup(int fd);
    }

    private static final LibC LIBC;

    static {
        LibC lib = null;
        try {
            lib = LibraryLoader.create(LibC.class).failImmediately().load("c");
        } catch (RuntimeException | LinkageError e) {
            LOG.info("tcp: frames are written by the event loops only (jnr-ffi could not bind libc: {})", e.toString());
        }
        LIBC = lib;
    }

    private final FileDescriptor fd;
    private boolean closed;

    /** @return whether direct writes are possible in this process (libc is bound) */
    static boolean available() {
        return LIBC != null;
    }

    private DirectSocket(FileDescriptor fd) {
        this.fd = fd;
    }

    /**
     * Called on the channel's event loop, so the descriptor cannot be closed (and its number reused)
     * between the check that it is open and its duplication.
     *
     * @param channel an active lane connection
     * @return its socket for direct writes, or null where frames must go through the event loop
     *     (NIO, TLS, or no libc binding)
     */
    static DirectSocket of(Channel channel) {
        if (!channel.eventLoop().inEventLoop()) {
            throw new IllegalStateException("tcp: a socket is duplicated on its channel's event loop only");
        }
        if (LIBC == null || !(channel instanceof UnixChannel unix) || channel.pipeline().get(SslHandler.class) != null
                || !unix.fd().isOpen()) {
            return null;
        }
        int copy = LIBC.dup(unix.fd().intValue());
        if (copy < 0) {
            return null; // out of descriptors: the event loop writes everything
        }
        DirectSocket s = new DirectSocket(new FileDescriptor(copy));
        channel.closeFuture().addListener(f -> s.close());
        return s;
    }

    /**
     * Writes as much of the buffer's readable bytes as the socket takes now.
     *
     * @param b a buffer with a memory address
     * @return the bytes written (0 if the socket's buffer is full), or -1 if the socket is closed or failed
     */
    synchronized int write(ByteBuf b) {
        if (closed) {
            return -1;
        }
        try {
            return fd.writeAddress(b.memoryAddress(), b.readerIndex(), b.writerIndex());
        } catch (IOException e) {
            return -1; // the event loop's own write fails the same way and closes the connection
        }
    }

    /** Closes the duplicate; no write follows. */
    synchronized void close() {
        if (!closed) {
            closed = true;
            try {
                fd.close();
            } catch (IOException e) {
                LOG.debug("tcp: closing a duplicated socket descriptor", e);
            }
        }
    }
}
