package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A worker's ucx address, the transport's part of its {@code WorkerAddress}: the wire protocol's
 * version ({@link UcxWireup#VERSION}, so that workers of releases that cannot talk fail at the
 * origin's connect, naming both versions, rather than time out), the process's host identity, pid and start time (shared-memory peers are watched by process, since
 * UCT's shared memory reports no peer failure), one entry per opened iface: its transport, its
 * device and its UCT address (device and iface address as the native library frames them), and,
 * where the worker has a shared-memory transport, its key table (a component's packed key and the
 * table's address and length). Decoding is strict: bounds, names of the expected alphabet, no
 * trailing bytes; what UCT makes of an address's contents is checked by UCT
 * ({@code uct_iface_is_reachable}, {@code uct_rkey_unpack}) before it is used.
 *
 * @param host boot and PID-namespace identity, printable ASCII
 * @param pid the process id
 * @param start the process's start time (clock ticks since boot)
 * @param ifaces the worker's ifaces, in order of preference
 * @param table the worker's key table, or null if it keeps none
 */
record UcxAddress(String host, long pid, long start, List<Iface> ifaces, Table table) {
    /** More ifaces than one worker opens. */
    static final int MAX_IFACES = 32;
    /** The native library's bound on a device or iface address, twice, and its framing. */
    static final int MAX_UCT_ADDRESS = 4 + 2 * 1024;

    /**
     * One iface a peer can reach.
     *
     * @param transport the UCT transport ({@code posix}, {@code rc_mlx5}, ...)
     * @param device its device
     * @param address its UCT address
     */
    record Iface(String transport, String device, byte[] address) {
        /** Checks the fields, and copies the address. */
        Iface {
            if (!transport.matches("[a-z0-9_]{1,32}")) {
                throw new IllegalArgumentException("a UCT transport name of a-z, 0-9 and _: " + transport);
            }
            if (!device.matches("[\\x21-\\x7E]{1,64}")) {
                throw new IllegalArgumentException("a device name of 1 to 64 printable ASCII characters, no space");
            }
            if (address.length > MAX_UCT_ADDRESS) {
                throw new IllegalArgumentException("a UCT address of " + address.length + " bytes");
            }
            address = address.clone();
        }

        @Override
        public byte[] address() {
            return address.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Iface i && transport.equals(i.transport) && device.equals(i.device)
                    && Arrays.equals(address, i.address);
        }

        @Override
        public int hashCode() {
            return (transport.hashCode() * 31 + device.hashCode()) * 31 + Arrays.hashCode(address);
        }
    }

    /**
     * Where a worker's key table is: peers on its host map it with the component's packed key.
     *
     * @param component the UCT component whose memory holds it ({@code posix}, {@code sysv})
     * @param address its address in the owner's process
     * @param length its bytes
     * @param rkey the component's packed key for it
     */
    record Table(String component, long address, long length, byte[] rkey) {
        /** Checks the fields, and copies the key. */
        Table {
            if (!component.matches("[a-z0-9_]{1,32}")) {
                throw new IllegalArgumentException("a UCT component name of a-z, 0-9 and _: " + component);
            }
            if (length < 0 || rkey.length > UcxKeyPart.MAX_RKEY) {
                throw new IllegalArgumentException("a key table of " + length + " bytes with a key of " + rkey.length);
            }
            rkey = rkey.clone();
        }

        @Override
        public byte[] rkey() {
            return rkey.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Table t && component.equals(t.component) && address == t.address
                    && length == t.length && Arrays.equals(rkey, t.rkey);
        }

        @Override
        public int hashCode() {
            return (component.hashCode() * 31 + Long.hashCode(address ^ length)) * 31 + Arrays.hashCode(rkey);
        }
    }

    /** Checks the fields and freezes the list. */
    UcxAddress {
        if (!printable(host.getBytes(StandardCharsets.US_ASCII)) || host.length() > 255) {
            throw new IllegalArgumentException("a host identity of at most 255 printable characters");
        }
        if (ifaces.size() > MAX_IFACES) {
            throw new IllegalArgumentException(ifaces.size() + " ifaces, at most " + MAX_IFACES);
        }
        ifaces = List.copyOf(ifaces);
    }

    /** @return its ifaces as transport/device, for messages */
    String ifaceNames() {
        List<String> out = new java.util.ArrayList<>();
        ifaces.forEach(i -> out.add(i.transport() + "/" + i.device()));
        return out.toString();
    }

    byte[] encode() {
        byte[] h = host.getBytes(StandardCharsets.US_ASCII);
        int n = 1 + 2 + h.length + 16 + 1 + 1;
        for (Iface i : ifaces) {
            n += 1 + i.transport.length() + 1 + i.device.length() + 2 + i.address.length;
        }
        if (table != null) {
            n += 1 + table.component.length() + 16 + 2 + table.rkey.length;
        }
        ByteBuffer out = ByteBuffer.allocate(n).put(UcxWireup.VERSION).putShort((short) h.length).put(h).putLong(pid)
                .putLong(start).put((byte) ifaces.size());
        for (Iface i : ifaces) {
            byte[] t = i.transport.getBytes(StandardCharsets.US_ASCII);
            byte[] d = i.device.getBytes(StandardCharsets.US_ASCII);
            out.put((byte) t.length).put(t).put((byte) d.length).put(d).putShort((short) i.address.length)
                    .put(i.address);
        }
        out.put((byte) (table == null ? 0 : 1));
        if (table != null) {
            byte[] c = table.component.getBytes(StandardCharsets.US_ASCII);
            out.put((byte) c.length).put(c).putLong(table.address).putLong(table.length)
                    .putShort((short) table.rkey.length).put(table.rkey);
        }
        return out.array();
    }

    /** @throws FencelineException naming what is wrong, for any malformed address */
    static UcxAddress decode(byte[] address) {
        ByteBuffer in = ByteBuffer.wrap(address);
        try {
            byte version = in.get();
            if (version != UcxWireup.VERSION) {
                throw new FencelineException("ucx: the peer's address is of version " + version + ", this worker's of "
                        + UcxWireup.VERSION + " (their wire protocols differ: workers of different Fenceline releases)");
            }
            byte[] h = new byte[Short.toUnsignedInt(in.getShort())];
            in.get(h);
            long pid = in.getLong();
            long start = in.getLong();
            int count = Byte.toUnsignedInt(in.get());
            if (count > MAX_IFACES) {
                throw new FencelineException("ucx: a peer address with " + count + " ifaces, at most " + MAX_IFACES);
            }
            List<Iface> ifaces = new ArrayList<>(count);
            for (int k = 0; k < count; k++) {
                byte[] t = new byte[Byte.toUnsignedInt(in.get())];
                in.get(t);
                byte[] d = new byte[Byte.toUnsignedInt(in.get())];
                in.get(d);
                int n = Short.toUnsignedInt(in.getShort());
                if (n > MAX_UCT_ADDRESS) {
                    throw new FencelineException("ucx: a peer's UCT address of " + n + " bytes, at most "
                            + MAX_UCT_ADDRESS);
                }
                byte[] a = new byte[n];
                in.get(a);
                if (!printable(t) || !printable(d)) {
                    throw new FencelineException("ucx: malformed peer address (iface " + k + ": a name that is not"
                            + " printable ASCII)");
                }
                try {
                    ifaces.add(new Iface(new String(t, StandardCharsets.US_ASCII), new String(d,
                            StandardCharsets.US_ASCII), a));
                } catch (IllegalArgumentException e) {
                    throw new FencelineException("ucx: malformed peer address (iface " + k + ": " + e.getMessage() + ")");
                }
            }
            Table table = switch (in.get()) {
                case 0 -> null;
                case 1 -> {
                    byte[] c = new byte[Byte.toUnsignedInt(in.get())];
                    in.get(c);
                    long address1 = in.getLong();
                    long length = in.getLong();
                    int n = Short.toUnsignedInt(in.getShort());
                    if (n > UcxKeyPart.MAX_RKEY) {
                        throw new FencelineException("ucx: a peer's key-table key of " + n + " bytes, at most "
                                + UcxKeyPart.MAX_RKEY);
                    }
                    byte[] rkey = new byte[n];
                    in.get(rkey);
                    if (!printable(c)) {
                        throw new FencelineException("ucx: malformed peer address (its key table's component is not"
                                + " printable ASCII)");
                    }
                    yield new Table(new String(c, StandardCharsets.US_ASCII), address1, length, rkey);
                }
                default -> throw new FencelineException("ucx: malformed peer address (its key-table flag is neither"
                        + " 0 nor 1)");
            };
            if (in.hasRemaining()) {
                throw new FencelineException("ucx: malformed peer address (" + in.remaining() + " bytes after its end)");
            }
            if (!printable(h)) {
                throw new FencelineException("ucx: malformed peer address (its host identity is not printable ASCII)");
            }
            return new UcxAddress(new String(h, StandardCharsets.US_ASCII), pid, start, ifaces, table);
        } catch (BufferUnderflowException e) {
            throw new FencelineException("ucx: malformed peer address (" + address.length + " bytes)");
        } catch (IllegalArgumentException e) {
            throw new FencelineException("ucx: malformed peer address (" + e.getMessage() + ")");
        }
    }

    private static boolean printable(byte[] b) {
        for (byte c : b) {
            if (c < 0x20 || c > 0x7E) {
                return false;
            }
        }
        return true;
    }
}
