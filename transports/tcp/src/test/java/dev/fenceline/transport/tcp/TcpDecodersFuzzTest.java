package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fenceline.FencelineException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Coverage-guided fuzzing of what a tcp peer writes: the stream as the target's pipeline splits it
 * (before authentication: only handshake-sized frames), each frame through {@link FrameDecoder},
 * and a worker address's tcp part. Every input is decoded within the format's bounds or refused with
 * the typed error. The test command runs the corpus under src/test/resources; {@code bin/fuzz}
 * fuzzes each target for a million executions.
 */
class TcpDecodersFuzzTest {
    private static final int MAX_DATA = 4096;
    private static final int PRE_AUTH = 512;

    /** The unauthenticated stream: split into frames no bigger than the pre-auth limit, or refused. */
    @FuzzTest(maxExecutions = 1_000_000)
    void preAuthenticationStream(byte[] input) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameSplitter(MAX_DATA + 1024, PRE_AUTH));
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(input));
        } catch (DecoderException refused) {
            assertTrue(refused instanceof TooLongFrameException || refused.getCause() instanceof TooLongFrameException,
                    refused.toString());
        }
        ByteBuf frame;
        while ((frame = ch.readInbound()) != null) {
            try {
                assertTrue(frame.readableBytes() + Wire.LENGTH_FIELD <= PRE_AUTH, "a frame of " + frame.readableBytes());
                decodeOne(frame);
            } finally {
                frame.release();
            }
        }
        ch.finishAndReleaseAll();
    }

    /** One frame's body: decoded once within bounds, or MalformedFrameException before any call. */
    @FuzzTest(maxExecutions = 1_000_000)
    void frame(byte[] input) {
        decodeOne(Unpooled.wrappedBuffer(input));
    }

    private static void decodeOne(ByteBuf frame) {
        Recorder r = new Recorder();
        int at = frame.readerIndex();
        try {
            FrameDecoder.decode(frame, r, MAX_DATA);
        } catch (MalformedFrameException refused) {
            assertTrue(r.calls.isEmpty(), "the handler was called before the frame was refused: " + r.calls);
            return;
        }
        assertEquals(1, r.calls.size(), "one call per frame: " + r.calls);
        assertEquals(at, frame.readerIndex(), "the decoder reads without consuming");
    }

    /** A worker address's tcp part: decoded to at most 16 addresses that encode back the same, or refused. */
    @FuzzTest(maxExecutions = 1_000_000)
    void address(byte[] input) {
        List<InetSocketAddress> a;
        try {
            a = TcpAddress.decode(input);
        } catch (FencelineException refused) {
            return;
        }
        assertTrue(a.size() <= 16, a.toString());
        assertEquals(a, TcpAddress.decode(TcpAddress.encode(a)));
    }
}
