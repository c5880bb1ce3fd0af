package dev.fenceline.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.UUID;

/**
 * A hand-driven tcp peer on a blocking socket, for tests that play a hostile one: it completes the
 * secret handshake as any holder of the secret could, then writes whatever frames the test builds
 * and reads the answers one by one.
 */
final class RawPeer implements AutoCloseable {
    private final Socket socket = new Socket();
    private final DataInputStream in;
    final UUID worker = UUID.randomUUID();

    /** Connects from {@code local} (null: any) and authenticates with the test secret as worker {@link #worker}. */
    RawPeer(InetSocketAddress target, UUID targetWorker, InetSocketAddress local) throws IOException,
            MalformedFrameException {
        if (local != null) {
            socket.bind(local);
        }
        socket.connect(target, 2000);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
        byte[] nonce = Handshake.nonce();
        write(FrameEncoder.hello(UnpooledByteBufAllocator.DEFAULT, worker, targetWorker, nonce));
        byte[][] serverNonce = new byte[1][];
        read(new FrameHandler() {
            @Override
            public void challenge(int version, byte[] n) {
                serverNonce[0] = n;
            }
        });
        write(FrameEncoder.auth(UnpooledByteBufAllocator.DEFAULT, Handshake.fromPassphrase(TcpConfigs.SECRET)
                .clientProof(Wire.VERSION, worker, targetWorker, nonce, serverNonce[0])));
        Recorder welcome = new Recorder();
        read(welcome);
        if (!welcome.single().get(0).equals("WELCOME")) {
            throw new IOException("not welcomed: " + welcome.calls);
        }
    }

    void write(ByteBuf frame) throws IOException {
        try {
            byte[] b = new byte[frame.readableBytes()];
            frame.readBytes(b);
            socket.getOutputStream().write(b);
        } finally {
            frame.release();
        }
    }

    /** @return the next answer, as {@link Recorder} lists it */
    List<Object> answer() throws IOException, MalformedFrameException {
        Recorder r = new Recorder();
        read(r);
        return r.single();
    }

    private void read(FrameHandler h) throws IOException, MalformedFrameException {
        int length = in.readInt();
        byte[] frame = new byte[length];
        in.readFully(frame);
        FrameDecoder.decode(Unpooled.wrappedBuffer(frame), h, 1 << 20);
    }

    /** Ends this side's stream (a half-close): the target reads its end after the frames before it. */
    void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
