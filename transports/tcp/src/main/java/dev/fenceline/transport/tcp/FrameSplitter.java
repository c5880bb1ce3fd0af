package dev.fenceline.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

/**
 * Splits the byte stream into length-prefixed frames. On the target side, until the peer has
 * authenticated, only handshake-sized frames pass: a bigger length prefix ends the connection
 * before any of its bytes are held, so an unauthenticated peer cannot make the target buffer a
 * whole fragment.
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

    /** The peer proved itself: frames up to the full size pass from now on. */
    void authenticated() {
        limit = max;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (limit < max && in.readableBytes() >= Wire.LENGTH_FIELD) {
            long frame = in.getUnsignedInt(in.readerIndex()) + Wire.LENGTH_FIELD;
            if (frame > limit) {
                in.skipBytes(in.readableBytes());
                throw new TooLongFrameException("a frame of " + frame + " bytes before authentication (at most "
                        + limit + ", fenceline.transport.tcp.limits.pre-auth-frame)");
            }
        }
        return super.decode(ctx, in);
    }
}
