package dev.fenceline.transport.tcp;

import dev.fenceline.FencelineException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP part of a {@link dev.fenceline.WorkerAddress}: the worker's listening addresses, one per
 * rail. Format: version u8, count u8, then per address: length u8 (4 or 16), address bytes,
 * port u16.
 */
final class TcpAddress {
    private static final byte VERSION = 1;
    private static final int MAX_ADDRESSES = 16;

    private TcpAddress() {
    }

    static byte[] encode(List<InetSocketAddress> addresses) {
        ByteBuffer out = ByteBuffer.allocate(2 + addresses.size() * (1 + 16 + 2));
        out.put(VERSION).put((byte) addresses.size());
        for (InetSocketAddress a : addresses) {
            byte[] ip = a.getAddress().getAddress();
            out.put((byte) ip.length).put(ip).putShort((short) a.getPort());
        }
        byte[] b = new byte[out.position()];
        out.flip().get(b);
        return b;
    }

    /** @throws FencelineException naming what is wrong with the bytes */
    static List<InetSocketAddress> decode(byte[] bytes) {
        if (bytes == null) {
            throw new FencelineException("tcp: the peer offers no tcp address");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            byte version = in.get();
            if (version != VERSION) {
                throw malformed(bytes, "version " + version + " (this runtime reads " + VERSION + ")");
            }
            int n = Byte.toUnsignedInt(in.get());
            if (n == 0 || n > MAX_ADDRESSES) {
                throw malformed(bytes, n + " addresses, expected 1 to " + MAX_ADDRESSES);
            }
            List<InetSocketAddress> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int len = Byte.toUnsignedInt(in.get());
                if (len != 4 && len != 16) {
                    throw malformed(bytes, "address " + i + " has " + len + " bytes");
                }
                byte[] ip = new byte[len];
                in.get(ip);
                int port = Short.toUnsignedInt(in.getShort());
                if (port == 0) {
                    throw malformed(bytes, "address " + i + " has port 0");
                }
                out.add(new InetSocketAddress(InetAddress.getByAddress(ip), port));
            }
            if (in.hasRemaining()) {
                throw malformed(bytes, in.remaining() + " trailing bytes");
            }
            return out;
        } catch (BufferUnderflowException e) {
            throw malformed(bytes, "truncated at byte " + in.position());
        } catch (UnknownHostException e) {
            throw malformed(bytes, e.getMessage()); // unreachable: the length was checked
        }
    }

    private static FencelineException malformed(byte[] bytes, String why) {
        return new FencelineException("tcp: malformed peer address (" + bytes.length + " bytes): " + why);
    }
}
