package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.ActiveMessageException;
import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportContext;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;

/**
 * Coverage-guided fuzzing of the target's whole pipeline as a peer meets it: the frame splitter,
 * the handshake and the frame handling of {@link TargetHandler}, in an {@link EmbeddedChannel}.
 * One target feeds bytes to a fresh connection (what anyone who can connect sends); the other
 * first completes a real handshake, then feeds them (what an authenticated but hostile peer
 * sends). Whatever arrives, no exception leaves the pipeline (a bad frame closes that connection,
 * an operation the memory refuses gets a typed NACK), and everything the target writes back is a
 * well-formed frame.
 */
class TargetPipelineFuzzTest {
    private static final UUID ME = new UUID(7, 7);
    private static final UUID PEER = new UUID(8, 8);
    private static final int MEMORY = 4096;
    private static final ByteBuffer memory = ByteBuffer.allocateDirect(MEMORY);
    private static TcpTransport transport;

    /** 4 KiB under key 1, bounds-checked with typed errors; AM handler 1 exists, others do not. */
    private static final RemoteAccessTarget TARGET = new RemoteAccessTarget() {
        private int offset(long key, long address, long length) {
            if (key != 1 || address < 0 || length < 0 || address > MEMORY - length) {
                throw new RemoteAccessException(RemoteAccessException.Reason.OUT_OF_BOUNDS, "key " + key + " [" + address + ", +" + length + ") outside 4096");
            }
            return (int) address;
        }

        @Override
        public void put(long keyId, long address, ByteBuffer src) {
            memory.put(offset(keyId, address, src.remaining()), src.duplicate(), 0, src.remaining());
        }

        @Override
        public void get(long keyId, long address, ByteBuffer dst) {
            dst.put(dst.position(), memory, offset(keyId, address, dst.remaining()), dst.remaining());
        }

        @Override
        public long atomic(long keyId, long address, int width, AtomicOp op, long operand) {
            return memory.getLong(offset(keyId, address & ~7L, 8));
        }

        @Override
        public long compareAndSwap(long keyId, long address, int width, long expected, long desired) {
            return memory.getLong(offset(keyId, address & ~7L, 8));
        }

        @Override
        public void activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
            if (id != 1) {
                throw new ActiveMessageException("no handler " + id);
            }
        }
    };

    private static synchronized TcpTransport transport() {
        if (transport == null) {
            // Handlers on the event loop (active-message-threads = 0): each input's effects are then
            // complete when it has been fed, so every input is judged on its own.
            Config section = ConfigFactory.parseString("secret = \"" + TcpConfigs.SECRET + "\"\nmax-fragment = 4KiB\n"
                    + "active-message-threads = 0\n"
                    + "max-rails = 1\nqueue-depth = 64")
                    .withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
            transport = new TcpTransport(new TransportContext(ME, "fuzz", section, TARGET,
                    new dev.fenceline.spi.support.ExactlyOnceWindows("worker 'fuzz'", 4096, java.time.Duration.ofMinutes(1),
                            65536, 1L << 24, System::nanoTime)), TcpSettings.fromSection(section));
        }
        return transport;
    }

    @AfterAll
    static void close() {
        if (transport != null) {
            transport.close();
        }
    }

    /** Records any exception that would leave the pipeline (none may). */
    private static final class Tail extends ChannelInboundHandlerAdapter {
        Throwable escaped;

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            escaped = cause;
        }
    }

    private static EmbeddedChannel connection(Tail tail) {
        TcpTransport t = transport();
        TcpSettings s = t.settings();
        return new EmbeddedChannel(new FrameSplitter(Wire.LENGTH_FIELD + Wire.FRAME_HEADER + 64 + Math.max(
                s.maxFragment(), 2 * Wire.MAX_REASON_BYTES), s.limits().preAuthFrame()), new TargetHandler(t), tail);
    }

    @FuzzTest(maxExecutions = 1_000_000)
    void unauthenticated(byte[] input) {
        Tail tail = new Tail();
        EmbeddedChannel ch = connection(tail);
        feed(ch, tail, input);
    }

    /** A handshake per input makes this one slow (about 2,500 inputs/s): a million take about 7 minutes. */
    @FuzzTest(maxExecutions = 1_000_000, maxDuration = "20m")
    void authenticated(byte[] input) throws Exception {
        Tail tail = new Tail();
        EmbeddedChannel ch = connection(tail);
        handshake(ch);
        feed(ch, tail, input);
    }

    private static void feed(EmbeddedChannel ch, Tail tail, byte[] input) {
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(input));
            ch.runPendingTasks();
            assertEquals(null, tail.escaped, "an exception left the target's pipeline");
            ByteBuf out;
            ByteBuf replies = Unpooled.buffer();
            while ((out = ch.readOutbound()) != null) {
                replies.writeBytes(out);
                out.release();
            }
            try {
                while (replies.readableBytes() >= Wire.LENGTH_FIELD) {
                    int length = replies.readInt();
                    ByteBuf frame = replies.readSlice(length);
                    FrameDecoder.decode(frame, new Recorder(), 1 << 20);
                }
                assertEquals(0, replies.readableBytes(), "the target wrote a partial frame");
            } catch (MalformedFrameException e) {
                throw new AssertionError("the target wrote a malformed frame: " + e.getMessage(), e);
            } finally {
                replies.release();
            }
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** HELLO, CHALLENGE, AUTH with the right proof, WELCOME: the connection is authenticated. */
    private static void handshake(EmbeddedChannel ch) throws MalformedFrameException {
        byte[] nonce = new byte[Wire.NONCE];
        ch.writeInbound(FrameEncoder.hello(ch.alloc(), PEER, ME, nonce));
        byte[][] serverNonce = new byte[1][];
        decodeReply(ch, new FrameHandler() {
            @Override
            public void challenge(int version, byte[] n) {
                serverNonce[0] = n;
            }
        });
        assertNotNull(serverNonce[0], "a CHALLENGE");
        ch.writeInbound(FrameEncoder.auth(ch.alloc(), Handshake.fromPassphrase(TcpConfigs.SECRET).clientProof(
                Wire.VERSION, PEER, ME, nonce, serverNonce[0])));
        boolean[] welcomed = new boolean[1];
        decodeReply(ch, new FrameHandler() {
            @Override
            public void welcome(int maxData, byte[] proof) {
                welcomed[0] = true;
            }
        });
        assertEquals(true, welcomed[0], "a WELCOME");
    }

    private static void decodeReply(EmbeddedChannel ch, FrameHandler h) throws MalformedFrameException {
        ByteBuf reply = ch.readOutbound();
        assertNotNull(reply, "a reply");
        try {
            reply.skipBytes(Wire.LENGTH_FIELD);
            FrameDecoder.decode(reply, h, 1 << 20);
        } finally {
            reply.release();
        }
    }
}
