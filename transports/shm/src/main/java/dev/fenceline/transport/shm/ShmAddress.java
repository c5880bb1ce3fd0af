package dev.fenceline.transport.shm;

import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A worker's shm address, the transport's part of its {@code WorkerAddress}: version 1, the host's
 * boot and PID-namespace id, the process's pid and start time, and its control segment's name.
 * Decoding is strict (bounds, no trailing bytes, a control segment's name); whether the peer is on
 * this host and alive is for the caller to check.
 *
 * @param host boot id and PID namespace id, space-separated
 * @param pid the process id
 * @param start the process's start time (clock ticks since boot)
 * @param control the name of its control segment
 */
record ShmAddress(String host, long pid, long start, String control) {
    private static final byte VERSION = 1;

    byte[] encode() {
        byte[] h = host.getBytes(StandardCharsets.US_ASCII);
        byte[] n = control.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + 2 + h.length + 16 + 2 + n.length).put(VERSION).putShort((short) h.length)
                .put(h).putLong(pid).putLong(start).putShort((short) n.length).put(n).array();
    }

    /** @throws FencelineException naming what is wrong, for any malformed address */
    static ShmAddress decode(byte[] address) {
        ByteBuffer in = ByteBuffer.wrap(address);
        try {
            byte version = in.get();
            if (version != VERSION) {
                throw new FencelineException("shm: the peer's address is of version " + version + ", this worker reads "
                        + VERSION + " (workers of different Fenceline releases)");
            }
            byte[] h = new byte[Short.toUnsignedInt(in.getShort())];
            in.get(h);
            long pid = in.getLong();
            long start = in.getLong();
            byte[] n = new byte[Short.toUnsignedInt(in.getShort())];
            in.get(n);
            if (in.hasRemaining()) {
                throw new FencelineException("shm: malformed peer address (" + in.remaining() + " bytes after its end)");
            }
            for (byte c : h) {
                if (c < 0x20 || c > 0x7E) {
                    throw new FencelineException("shm: malformed peer address (a host id byte 0x"
                            + Integer.toHexString(c & 0xFF) + ", not printable ASCII)");
                }
            }
            String host = new String(h, StandardCharsets.US_ASCII);
            String name = new String(n, StandardCharsets.UTF_8);
            if (!Segments.isControlName(name)) {
                throw new FencelineException("shm: malformed peer segment name '" + Segments.printable(name) + "'");
            }
            return new ShmAddress(host, pid, start, name);
        } catch (java.nio.BufferUnderflowException e) {
            throw new FencelineException("shm: malformed peer address (" + address.length + " bytes)");
        }
    }
}
