package dev.fenceline.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.ssl.SslHandler;

/**
 * Splits the byte stream into length-prefixed frames. Until the peer has authenticated (on the
 * target side its AUTH, on the origin side the server's WELCOME), only handshake-sized frames pass:
 * a bigger length prefix ends the connection before any of its bytes are held, so an
 * unauthenticated peer cannot make either side buffer a whole fragment.
 */
final class FrameSplitter extends LengthFieldBasedFrameDecoder {
    private final int max;
    /** Written and read on the channel's event loop only. */
    private int limit;

    /**
     * @param max the largest frame, length prefix included
     * @param beforeAuthentication the largest frame until {@link #authenticated()}; {@code max} for none
     */
    FrameSplitter(int max, int beforeAuthentication) {
        super(max, 0, Wire.LENGTH_FIELD, 0, Wire.LENGTH_FIELD, true);
        this.max = max;
        this.limit = Math.min(max, beforeAuthentication);
        // A large frame spans many socket reads: keep the reads as they are (a composite) instead of
        // copying each into one growing buffer; the target writes the pieces straight into memory.
        setCumulator(COMPOSITE_CUMULATOR);
    }

    /** @return what is held of the frame in the making (for tests) */
    ByteBuf held() {
        return internalBuffer();
    }

    /** The peer proved itself: frames up to the full size pass from now on. */
    void authenticated() {
        limit = max;
    }

    /** Pieces a frame in the making may be held in before small ones are merged. */
    static final int MAX_PIECES = 64;
    /** Pieces smaller than this on average are merged once there are more than {@link #MAX_PIECES}. */
    static final int SMALL_PIECE = 4096;

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        // Each read is a piece of its own (a pooled buffer of at least 64 bytes, and its bookkeeping):
        // a peer trickling a frame a byte per read would make it cost a couple of hundred times its
        // size. Many small pieces are merged into one; the reads of a bulk transfer are large.
        if (in instanceof CompositeByteBuf pieces && pieces.numComponents() > MAX_PIECES
                && pieces.capacity() / pieces.numComponents() < SMALL_PIECE) {
            pieces.consolidate();
        }
        if (limit < max && in.readableBytes() >= Wire.LENGTH_FIELD) {
            long frame = in.getUnsignedInt(in.readerIndex()) + Wire.LENGTH_FIELD;
            if (frame > limit) {
                boolean tls = tlsRecord(in) && ctx.pipeline().get(SslHandler.class) == null;
                in.skipBytes(in.readableBytes());
                if (tls) {
                    // Read as a length, a TLS record header is a frame of hundreds of MB: name the setting
                    // that differs, not the size limit. Only without TLS here: an SslHandler would decode it.
                    throw new CorruptedFrameException("the peer speaks TLS (a TLS record came where a frame"
                            + " was expected), while this side has fenceline.transport.tcp.security = secret: both"
                            + " sides need the same security");
                }
                throw new TooLongFrameException("a frame of " + frame + " bytes before authentication (at most "
                        + limit + ", fenceline.transport.tcp.limits.pre-auth-frame)");
            }
        }
        return super.decode(ctx, in);
    }

    /** @return whether {@code in} starts like a TLS handshake or alert record (content type, then major version 3) */
    private static boolean tlsRecord(ByteBuf in) {
        int type = in.getUnsignedByte(in.readerIndex());
        return (type == 0x15 || type == 0x16) && in.getUnsignedByte(in.readerIndex() + 1) == 3;
    }
}
