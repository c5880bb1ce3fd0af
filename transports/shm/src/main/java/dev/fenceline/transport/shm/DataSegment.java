package dev.fenceline.transport.shm;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.SharedMemory;
import dev.fenceline.spi.support.MappedMemory;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.agrona.BufferUtil;
import org.agrona.UnsafeApi;

/**
 * A region's memory in a segment file, mapped by its owner and by every peer process that unpacks
 * its key. The first 64 bytes are a header peers check before each direct access, so a forged,
 * stale or closed key is refused without asking the owner:
 *
 * <pre>
 * 0  magic u32 "FLSG"   4  version u32   8  key id u64   16  state u32 (0 open, 1 closed)
 * 20 access u32 (dev.fenceline.Access bits, written before the key id)   24  length u64
 * </pre>
 */
final class DataSegment implements SharedMemory {
    static final int HEADER = 64;
    static final int MAGIC = 0x464C5347;
    private static final int VERSION = 1;
    private static final int KEY = 8;
    private static final int STATE = 16;
    private static final int ACCESS = 20;
    private static final int LENGTH = 24;
    private static final int CLOSED = 1;
    private static final byte DATA_MAGIC = 0x53;
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final Path file;
    private final MappedByteBuffer mapping;
    private final long length;
    private final Runnable onClose;

    private DataSegment(Path file, MappedByteBuffer mapping, long length, Runnable onClose) {
        this.file = file;
        this.mapping = mapping;
        this.length = length;
        this.onClose = onClose;
    }

    static DataSegment create(Path file, long length, boolean sealed, Runnable onClose) throws IOException {
        MappedByteBuffer m = Segments.create(file, HEADER + length, sealed);
        INT.set(m, 4, VERSION);
        LONG.set(m, LENGTH, length);
        INT.setRelease(m, 0, MAGIC);
        return new DataSegment(file, m, length, onClose);
    }

    Path file() {
        return file;
    }

    @Override
    public ByteBuffer buffer() {
        return mapping.slice(HEADER, (int) length).order(ByteOrder.nativeOrder());
    }

    @Override
    public byte[] transportData() {
        byte[] name = file.getFileName().toString().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 8 + 2 + name.length).put(DATA_MAGIC).put((byte) 1).putLong(length)
                .putShort((short) name.length).put(name).array();
    }

    @Override
    public void registered(long keyId) {
        registered(keyId, Access.all());
    }

    /** Peers check the access in the header before each direct access: the key id's release publishes it. */
    @Override
    public void registered(long keyId, java.util.Set<Access> access) {
        INT.set(mapping, ACCESS, Access.bits(access));
        LONG.setRelease(mapping, KEY, keyId);
    }

    @Override
    public void close() {
        INT.setVolatile(mapping, STATE, CLOSED); // peers' next access sees it
        Segments.remove(file); // peers' mappings stay valid until they drop them
        onClose.run();
    }

    /**
     * A peer's view of a region's segment. The header's three words are read on every direct
     * operation, by their absolute address in this process's mapping: the header is a fixed 64
     * bytes, checked when mapped, and a bounds check per read (an address-based buffer's) took an
     * implicit 8-byte put from 9.0 ns to 11.5 (JMH, FastPathBenchmark). The hot accesses to the
     * data (an 8-byte store, a 64-bit ADD) go by address too, within the range its caller checked
     * against {@link #capacity()}. Each access keeps the buffer it goes through reachable, so the
     * mapping stays mapped while it is touched.
     */
    static final class Peer {
        private final String name;
        private final ByteBuffer header;
        private final long headerAddress;
        private final ByteBuffer data;
        private final long dataAddress;
        private final int capacity;
        /** Puts of this many bytes and more take the native copy ({@link NativeCopy}); MAX_VALUE: none. */
        private final int nativeFrom;

        Peer(String name, ByteBuffer header, ByteBuffer data, int nativeFrom) {
            if (!header.isDirect() || header.capacity() < HEADER || !data.isDirect()) {
                throw new IllegalArgumentException("a segment is mapped: a header of " + HEADER + " bytes and its data");
            }
            this.name = name;
            this.header = header;
            this.headerAddress = BufferUtil.address(header);
            this.data = data;
            this.dataAddress = BufferUtil.address(data);
            this.capacity = data.capacity();
            this.nativeFrom = nativeFrom;
        }

        /** @return the segment's file name */
        String name() {
            return name;
        }

        /** @return the region's bytes in this process's mapping */
        ByteBuffer data() {
            return data;
        }

        /** @return the region's length in this mapping */
        int capacity() {
            return capacity;
        }

        /** @return the smallest put that takes the native copy; {@code Integer.MAX_VALUE}: none */
        int nativeCopyFrom() {
            return nativeFrom;
        }

        /**
         * An 8-byte put, one store by address, then the release fence of every put.
         *
         * @param at an offset the caller checked against {@link #capacity()}
         * @param src exactly 8 bytes at its position (not moved), copied as they are
         */
        void putLong(int at, ByteBuffer src) {
            UnsafeApi.putLong(null, dataAddress + at, (long) LONG.get(src, src.position()));
            Reference.reachabilityFence(data);
            VarHandle.releaseFence();
        }

        /**
         * A put of another size than 8: from {@code nativeFrom} bytes out of a direct buffer by the
         * native copy (the segment is sealed: nothing can shrink it under the copy), else by the
         * JVM's; then the release fence of every put.
         *
         * @param at an offset the caller checked, with {@code n}, against {@link #capacity()}
         * @param src the bytes at its position (not moved)
         * @param n the length the caller checked: the native copy takes it, not the buffer's word
         *     again, and only within both buffers (another thread may move the source's bounds)
         */
        void put(int at, ByteBuffer src, int n) {
            int from = src.position();
            if (n >= nativeFrom && src.isDirect() && at >= 0 && n <= capacity - at && from >= 0
                    && n <= src.limit() - from) {
                NativeCopy.copy(dataAddress + at, BufferUtil.address(src) + from, n);
                Reference.reachabilityFence(data);
                Reference.reachabilityFence(src);
                VarHandle.releaseFence();
            } else {
                MappedMemory.put(data, at, src);
            }
        }

        /**
         * An atomic on the region: the hot one, a 64-bit ADD, by address; the others through the
         * mapping's buffer ({@link MappedMemory#atomic(ByteBuffer, int, AtomicOp, int, long)}).
         *
         * @param at an offset the caller checked against {@link #capacity()} and for alignment
         * @return the old value (sign-extended for width 4)
         */
        long atomic(int at, AtomicOp op, int width, long operand) {
            if (width != Long.BYTES || op != AtomicOp.ADD) {
                return MappedMemory.atomic(data, at, op, width, operand);
            }
            long old = UnsafeApi.getAndAddLong(null, dataAddress + at, operand);
            Reference.reachabilityFence(data);
            return old;
        }

        boolean open() {
            boolean open = UnsafeApi.getIntVolatile(null, headerAddress + STATE) != CLOSED;
            Reference.reachabilityFence(header);
            return open;
        }

        long keyId() {
            long id = UnsafeApi.getLongAcquire(null, headerAddress + KEY);
            Reference.reachabilityFence(header);
            return id;
        }

        /** @return whether the owner registered the region for {@code a} (read after {@link #keyId()}) */
        boolean permits(Access a) {
            boolean permits = (UnsafeApi.getInt(null, headerAddress + ACCESS) & (1 << a.ordinal())) != 0;
            Reference.reachabilityFence(header);
            return permits;
        }
    }

    /** @return the segment file name in a key's transport data, or null if it is not an shm key */
    static String nameOf(byte[] transportData) {
        if (transportData.length < 12 || transportData[0] != DATA_MAGIC || transportData[1] != 1) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(transportData);
        b.position(10);
        int n = Short.toUnsignedInt(b.getShort());
        if (n == 0 || n != b.remaining() || n > 255) {
            return null;
        }
        String name = new String(transportData, 12, n, StandardCharsets.UTF_8);
        return Segments.isDataName(name) ? name : null;
    }

    /**
     * Maps a peer's segment and checks its header; its puts take the JVM's copy.
     *
     * @param sealedOnly whether only a sealed segment may be mapped ({@link Segments#open(Path, boolean)})
     */
    static Peer map(Path file, boolean sealedOnly) throws IOException {
        return map(file, sealedOnly, Integer.MAX_VALUE);
    }

    /**
     * Maps a peer's segment and checks its header.
     *
     * @param sealedOnly whether only a sealed segment may be mapped ({@link Segments#open(Path, boolean)})
     * @param nativeCopyFrom puts of this many bytes and more take the native copy, where the segment
     *     is sealed ({@code sealedOnly}) and the copy is available ({@link NativeCopy#unavailable()})
     */
    static Peer map(Path file, boolean sealedOnly, int nativeCopyFrom) throws IOException {
        MappedByteBuffer m = Segments.open(file, sealedOnly);
        if (m.capacity() < HEADER || (int) INT.getAcquire(m, 0) != MAGIC) {
            throw new FencelineException("shm: " + file + " is not a Fenceline data segment");
        }
        long len = (long) LONG.get(m, LENGTH);
        if (len < 0 || len > m.capacity() - HEADER) {
            throw new FencelineException("shm: " + file + " has a corrupt length " + len);
        }
        // Off: the library is not even loaded. Sealed only: nothing can shrink the mapping under the copy.
        int nativeFrom = nativeCopyFrom != Integer.MAX_VALUE && sealedOnly && NativeCopy.unavailable() == null
                ? nativeCopyFrom : Integer.MAX_VALUE;
        return new Peer(file.getFileName().toString(), m.slice(0, HEADER).order(ByteOrder.nativeOrder()),
                m.slice(HEADER, (int) len).order(ByteOrder.nativeOrder()), nativeFrom);
    }
}
