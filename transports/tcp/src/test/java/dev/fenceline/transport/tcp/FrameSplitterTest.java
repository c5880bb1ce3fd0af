package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

/**
 * The stream split into frames, whatever the reads it comes in: a frame trickled a byte per read
 * is held in a bounded number of pieces, and one that comes in large reads is not copied.
 */
class FrameSplitterTest {
    private static ByteBuf frame(int body) {
        ByteBuf f = Unpooled.buffer(Wire.LENGTH_FIELD + body);
        f.writeInt(body);
        for (int i = 0; i < body; i++) {
            f.writeByte(i * 31);
        }
        return f;
    }

    private static void assertFrame(EmbeddedChannel ch, ByteBuf sent) {
        ByteBuf out = ch.readInbound();
        assertNotNull(out, "the frame came out whole");
        try {
            assertTrue(io.netty.buffer.ByteBufUtil.equals(sent, Wire.LENGTH_FIELD, out, out.readerIndex(),
                    sent.capacity() - Wire.LENGTH_FIELD) && out.readableBytes() == sent.capacity() - Wire.LENGTH_FIELD,
                    "the frame's bytes, " + out.readableBytes() + " of them");
        } finally {
            out.release();
        }
        assertNull(ch.readInbound());
    }

    /**
     * Feeds a frame of {@code body} bytes in reads of {@code read} bytes, then checks it came out
     * whole.
     *
     * @return the most pieces held while the frame was incomplete
     */
    private static int feed(int body, int read) {
        FrameSplitter splitter = new FrameSplitter(Wire.LENGTH_FIELD + body, Wire.LENGTH_FIELD + body);
        EmbeddedChannel ch = new EmbeddedChannel(splitter);
        ByteBuf f = frame(body);
        int most = 0;
        while (f.readableBytes() > read) {
            ch.writeInbound(f.readRetainedSlice(read));
            if (splitter.held() instanceof CompositeByteBuf pieces) {
                most = Math.max(most, pieces.numComponents());
            }
        }
        ch.writeInbound(f.readRetainedSlice(f.readableBytes()));
        assertFrame(ch, f);
        f.release();
        ch.finishAndReleaseAll();
        return most;
    }

    @Test
    void aFrameTrickledAByteAtATimeIsHeldInFewPieces() {
        int most = feed(16 << 10, 1);
        assertTrue(most <= FrameSplitter.MAX_PIECES + 1, "pieces held at most: " + most);
    }

    @Test
    void aFrameInLargeReadsKeepsItsPieces() {
        int most = feed(1 << 20, 4096);
        assertTrue(most > FrameSplitter.MAX_PIECES, "large reads stay as they came: " + most + " pieces");
    }

    /**
     * Before authentication, a TLS alert (what a TLS server may answer a clear HELLO with) or
     * handshake record reads as a length of hundreds of MB: the refusal names the security setting,
     * not limits.pre-auth-frame. Any other oversized length still names the limit.
     */
    @Test
    void aTlsRecordBeforeAuthenticationNamesTheSecuritySetting() {
        for (int[] header : new int[][] {{0x15, 3, 3, 0, 2, 2, 40}, {0x16, 3, 1, 0, 0xf4, 1}}) {
            String message = refusedBeforeAuthentication(header);
            assertTrue(message.contains("the peer speaks TLS") && message.contains(
                    "fenceline.transport.tcp.security = secret"), message);
        }
        String message = refusedBeforeAuthentication(new int[] {0x15, 0, 0, 0, 1});
        assertTrue(message.contains("limits.pre-auth-frame"), message);
    }

    private static String refusedBeforeAuthentication(int[] bytes) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameSplitter(1 << 20, 512));
        ByteBuf in = Unpooled.buffer(bytes.length);
        for (int b : bytes) {
            in.writeByte(b);
        }
        DecoderException e = assertThrows(DecoderException.class, () -> ch.writeInbound(in));
        ch.finishAndReleaseAll();
        return e.getMessage();
    }
}
