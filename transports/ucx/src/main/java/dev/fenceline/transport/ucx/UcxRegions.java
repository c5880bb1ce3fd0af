package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.SharedMemory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A worker's memory as UCT sees it: its key table, regions allocated by a shared-memory domain
 * (posix, sysv), and regions registered with every memory domain that registers (cma, tcp, RDMA
 * adapters). Each region's remote key gets a part naming its key-table slot and one packed UCT key
 * per memory domain ({@link UcxKeyPart}).
 *
 * <p>These calls run on the callers' threads (the user's {@code allocate} and {@code register},
 * the transport actor's release after quarantine), never on the progress agent's: they touch
 * memory domains only, which UCT does not make thread-safe, so one lock serializes them (they are
 * rare and short, never on the data path). The agent never calls a memory domain.
 */
final class UcxRegions implements AutoCloseable {
    private final List<UctIface> ifaces;
    private final UctIface shared;
    private final int maxRegistrations;
    private final Consumer<Closed> quarantine;
    private final ReentrantLock lock = new ReentrantLock();
    private final UctMemory tableMemory;
    private final KeyTable table;
    private final List<Handle> open = new ArrayList<>();
    private boolean closed;

    /** A closed region, kept until its quarantine ends. */
    interface Closed {
        /** Frees its memory and its slot. */
        void release();
    }

    /**
     * @param ifaces the worker's ifaces
     * @param maxRegistrations key-table slots
     * @param quarantine told of each closed region; it calls {@link Closed#release()} after the
     *     registration quarantine
     */
    UcxRegions(List<UctIface> ifaces, int maxRegistrations, Consumer<Closed> quarantine) {
        this.ifaces = List.copyOf(ifaces);
        this.maxRegistrations = maxRegistrations;
        this.quarantine = quarantine;
        UctIface sm = null;
        for (UctIface i : ifaces) {
            UctIfaceAttributes a = i.attributes();
            if (i.resource().deviceType().equals("shm") && a.has(UctIfaceAttributes.MD_ALLOC)
                    && a.has(UctIfaceAttributes.MD_RKEY_PTR)) {
                sm = i;
                break;
            }
        }
        this.shared = sm;
        if (sm != null) {
            tableMemory = sm.allocate(KeyTable.bytes(maxRegistrations), Set.of(Access.READ));
            new org.agrona.concurrent.UnsafeBuffer(tableMemory.address(), KeyTable.bytes(maxRegistrations))
                    .setMemory(0, KeyTable.bytes(maxRegistrations), (byte) 0);
            table = new KeyTable(tableMemory.address(), maxRegistrations);
            dev.fenceline.spi.support.Heartbeat.start(table);
        } else {
            tableMemory = null;
            table = null;
        }
    }

    /**
     * The transport stopped ({@link UcxFailStop}): its key table beats no more, so that peers on this
     * host, whose keepalive reads the beat, fail their lanes to it rather than wait (any thread).
     */
    void stopHeartbeat() {
        if (table != null) {
            dev.fenceline.spi.support.Heartbeat.stop(table);
        }
    }

    /** @return where peers on this host find the key table, or null if this worker keeps none */
    UcxAddress.Table tableAddress() {
        if (table == null) {
            return null;
        }
        return new UcxAddress.Table(shared.resource().memoryDomain(), tableMemory.address(),
                KeyTable.bytes(maxRegistrations), tableMemory.pack());
    }

    /**
     * @param bytes the region's length
     * @return memory of the shared-memory domain, peers on this host reach by UCT's stores and
     *     atomics; null if the worker has no shared-memory transport or the length is too large
     */
    SharedMemory allocate(long bytes) {
        if (shared == null || bytes > Integer.MAX_VALUE || bytes <= 0) {
            return null;
        }
        lock.lock();
        try {
            checkOpen();
            int slot = takeSlot();
            UctMemory memory;
            try {
                memory = shared.allocate(bytes, Access.all());
            } catch (RuntimeException e) {
                table.release(slot);
                throw e;
            }
            Map<UctIface, UctMemory> parts = new LinkedHashMap<>();
            parts.put(shared, memory);
            try {
                registerElsewhere(memory.address(), bytes, shared, parts);
            } catch (RuntimeException e) {
                try {
                    memory.close();
                } finally {
                    table.release(slot);
                }
                throw e;
            }
            Shared s = new Shared(slot, memory.address(), bytes, parts);
            open.add(s);
            return s;
        } finally {
            lock.unlock();
        }
    }

    /**
     * @param memory a direct buffer the user registers
     * @return its handle, registered with every memory domain that registers; null if none does and
     *     the worker keeps no key table (its peers then reach it through the target only)
     */
    RegionHandle register(ByteBuffer memory) {
        long address = com.kenai.jffi.MemoryIO.getInstance().getDirectBufferAddress(memory);
        long length = memory.capacity();
        lock.lock();
        try {
            checkOpen();
            Map<UctIface, UctMemory> parts = new LinkedHashMap<>();
            registerElsewhere(address, length, null, parts);
            if (parts.isEmpty() && table == null) {
                return null;
            }
            int slot;
            try {
                slot = table == null ? UcxKeyPart.NO_SLOT : takeSlot();
            } catch (RuntimeException e) {
                parts.values().forEach(UctMemory::close);
                throw e;
            }
            Handle h = new Handle(slot, address, length, parts);
            open.add(h);
            return h;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Registers with every memory domain that registers, one per domain name (the caller holds the
     * lock). If one refuses, the registrations it made are undone before the refusal goes on: the
     * caller has nothing of them to release.
     */
    private void registerElsewhere(long address, long length, UctIface skip, Map<UctIface, UctMemory> into) {
        java.util.Set<String> done = new java.util.HashSet<>();
        if (skip != null) {
            done.add(skip.resource().memoryDomain());
        }
        java.util.List<UctMemory> made = new java.util.ArrayList<>();
        try {
            for (UctIface i : ifaces) {
                if (i.attributes().has(UctIfaceAttributes.MD_REG) && done.add(i.resource().memoryDomain())) {
                    UctMemory m = i.register(address, length, Access.all());
                    made.add(m);
                    into.put(i, m);
                }
            }
        } catch (RuntimeException e) {
            for (UctMemory m : made) {
                into.values().remove(m);
                try {
                    m.close();
                } catch (RuntimeException alsoFailed) {
                    e.addSuppressed(alsoFailed);
                }
            }
            throw e;
        }
    }

    private int takeSlot() {
        int slot = table.take();
        if (slot < 0) {
            throw new FencelineException("ucx: this worker has " + maxRegistrations + " regions open, the most "
                    + UcxSettings.SECTION + ".max-registrations allows");
        }
        return slot;
    }

    private void checkOpen() {
        if (closed) {
            throw new FencelineException("ucx: the transport is closed");
        }
    }

    /**
     * @param handle the region handle an operation's local buffer is in, or null
     * @param iface a lane's iface
     * @return the UCT memory handle of that region's registration with the iface's memory domain, or
     *     0 if it has none
     */
    static long memoryHandle(RegionHandle handle, UctIface iface) {
        if (!(handle instanceof Handle h)) {
            return 0;
        }
        for (Map.Entry<UctIface, UctMemory> e : h.parts.entrySet()) {
            if (e.getKey().resource().memoryDomain().equals(iface.resource().memoryDomain())) {
                return e.getValue().memoryHandle();
            }
        }
        return 0;
    }

    /** A region's registrations and its key-table slot. */
    private class Handle implements RegionHandle, Closed {
        final int slot;
        final long address;
        final long length;
        final Map<UctIface, UctMemory> parts;
        private final byte[] data;
        private final long digest;
        private boolean ended;

        Handle(int slot, long address, long length, Map<UctIface, UctMemory> parts) {
            this.slot = slot;
            this.address = address;
            this.length = length;
            this.parts = parts;
            Map<String, byte[]> rkeys = new LinkedHashMap<>();
            parts.forEach((iface, m) -> rkeys.put(iface.resource().memoryDomain(), m.pack()));
            UcxKeyPart part = new UcxKeyPart(slot, rkeys);
            this.data = part.encode();
            this.digest = part.digest();
        }

        @Override
        public byte[] transportData() {
            return data.clone();
        }

        @Override
        public void registered(long keyId) {
            registered(keyId, Access.all());
        }

        /** Peers on this host check the slot before they reach the region without this worker. */
        @Override
        public void registered(long keyId, Set<Access> access) {
            if (slot != UcxKeyPart.NO_SLOT) {
                table.open(slot, keyId, address, length, access, digest);
            }
        }

        /**
         * Peers refuse the region from their next check on; its memory and slot stay until the
         * quarantine ends, so an access that passed the check just before still finds them.
         */
        @Override
        public void close() {
            lock.lock();
            try {
                if (ended || closed) {
                    return; // closed with the transport: its memory and the table are gone already
                }
                ended = true;
                if (slot != UcxKeyPart.NO_SLOT) {
                    table.close(slot);
                }
            } finally {
                lock.unlock();
            }
            quarantine.accept(this);
        }

        @Override
        public void release() {
            lock.lock();
            try {
                if (open.remove(this)) {
                    parts.values().forEach(UctMemory::close);
                    if (slot != UcxKeyPart.NO_SLOT && !closed) {
                        table.release(slot);
                    }
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** A region in memory of the shared-memory domain. */
    private final class Shared extends Handle implements SharedMemory {
        private final ByteBuffer buffer;

        Shared(int slot, long address, long length, Map<UctIface, UctMemory> parts) {
            super(slot, address, length, parts);
            this.buffer = com.kenai.jffi.MemoryIO.getInstance().newDirectByteBuffer(address, (int) length);
        }

        @Override
        public ByteBuffer buffer() {
            return buffer.duplicate().order(java.nio.ByteOrder.nativeOrder());
        }
    }

    /**
     * Frees every region still open and the key table; the worker and its ifaces are closed after.
     * While the JVM exits, memory UCT allocated is left mapped for the process's end ({@link JvmExit}).
     */
    @Override
    public void close() {
        close(JvmExit.underway());
    }

    /** @param exiting whether the JVM is exiting (then UCT's allocations stay mapped) */
    void close(boolean exiting) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (Handle h : List.copyOf(open)) {
                if (!(exiting && h instanceof Shared)) {
                    h.parts.values().forEach(UctMemory::close);
                }
            }
            open.clear();
            if (tableMemory != null) {
                dev.fenceline.spi.support.Heartbeat.stop(table); // before its memory goes
                if (!exiting) { // other workers' calling threads in this process may read it through their mapping
                    tableMemory.close();
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
