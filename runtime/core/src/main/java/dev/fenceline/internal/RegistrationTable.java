package dev.fenceline.internal;

import dev.fenceline.Access;
import dev.fenceline.ActiveMessageException;
import dev.fenceline.ActiveMessageHandler;
import dev.fenceline.AtomicOp;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.RegionHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import io.netty.util.internal.PlatformDependent;

/**
 * A worker's registered memory and active-message handlers. Transports apply incoming operations
 * through it from their own threads; registration is rare, lookups are lock-free.
 */
public final class RegistrationTable implements RemoteAccessTarget, LocalRegions {
    /** Active-message ids are in [0, MAX_AM_ID]. */
    public static final int MAX_AM_ID = 65535;
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final UUID ownerId;
    private final String ownerName;
    /** Set by {@link #closeAll}: the worker is closing. */
    private volatile boolean closedAll;
    private final SecureRandom random = new SecureRandom();
    private final Map<Long, RegisteredRegion> regions = new ConcurrentHashMap<>();
    /** Open regions by base address, for finding an operation's local buffer. */
    private final java.util.concurrent.ConcurrentSkipListMap<Long, RegisteredRegion> byAddress =
            new java.util.concurrent.ConcurrentSkipListMap<>();
    /**
     * The most recently closed keys, so that a late access is told the region was closed rather than
     * that the key is unknown. Bounded: a worker that registers and closes regions all day does not
     * keep every key it ever issued (an older closed key is then reported as unknown, which is as
     * true). Keys are random 64-bit numbers, so a forgotten one is not issued again in practice.
     */
    private final Set<Long> closedKeys = java.util.Collections.synchronizedSet(java.util.Collections.newSetFromMap(
            new java.util.LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                    return size() > CLOSED_KEYS_REMEMBERED;
                }
            }));
    /** How many closed keys a worker remembers. */
    static final int CLOSED_KEYS_REMEMBERED = 4096;
    private volatile RegionTransports transports;
    private final AtomicReferenceArray<ActiveMessageHandler> handlers = new AtomicReferenceArray<>(MAX_AM_ID + 1);
    private final SlowHandlers slowHandlers;

    /**
     * @param t asked by {@link #allocate(long)} for shared memory, and by both it and
     *     {@link #register(ByteBuffer)} for every transport's handle of the region (its key's parts)
     */
    public void transports(RegionTransports t) {
        this.transports = t;
    }

    /**
     * @param ownerId the owning worker's id
     * @param ownerName the owning worker's name, for messages
     */
    public RegistrationTable(UUID ownerId, String ownerName) {
        this.ownerId = ownerId;
        this.ownerName = ownerName;
        this.slowHandlers = new SlowHandlers(ownerName);
    }

    /**
     * @param bound how long a handler call may run before it is reported (a JFR event each time, a
     *     log line the first time per id), as a watchdog that looks every half of it finds it;
     *     zero for no bound
     */
    public void handlerTimeBound(java.time.Duration bound) {
        slowHandlers.bound(bound.toNanos());
    }

    /**
     * @param direct a direct, writable buffer; the region covers position to limit
     * @return the region
     */
    public MemoryRegion register(ByteBuffer direct) {
        return register(direct, Access.all());
    }

    /**
     * @param direct a direct, writable buffer; the region covers position to limit
     * @param access what peers may do to it, at least one
     * @return the region
     */
    public MemoryRegion register(ByteBuffer direct, Set<Access> access) {
        return register(direct, null, access);
    }

    private MemoryRegion register(ByteBuffer direct, RegionTransports.Shared given, Set<Access> access) {
        if (closedAll) {
            if (given != null) {
                given.memory().close();
            }
            throw closedError();
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("a region must permit some access (READ, WRITE, ATOMIC)");
        }
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered (got a heap buffer)");
        }
        if (direct.isReadOnly()) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered for remote access");
        }
        ByteBuffer memory = direct.slice().order(ByteOrder.nativeOrder());
        RegionTransports t = transports;
        // Every transport that keeps a handle for the region gives the key a part of its own, so a
        // peer that shares any one of them can use the key; closing the region closes every handle.
        Map<String, RegionHandle> handles = new java.util.LinkedHashMap<>();
        if (given != null) {
            handles.put(given.transport(), given.memory());
        }
        if (t != null) {
            try {
                handles.putAll(t.register(memory, given == null ? null : given.transport()));
            } catch (RuntimeException e) {
                handles.values().forEach(RegionHandle::close);
                throw e;
            }
        }
        long base = PlatformDependent.directBufferAddress(memory);
        RegisteredRegion region;
        // The handles learn the key before the region is in the table, where closeAll finds it: a
        // close never comes between the two and finds handles that open again after it.
        try {
            Map<String, byte[]> parts = new java.util.LinkedHashMap<>();
            handles.forEach((name, h) -> parts.put(name, h.transportData()));
            long keyId;
            do {
                keyId = random.nextLong();
            } while (keyId == 0 || closedKeys.contains(keyId) || regions.containsKey(keyId));
            region = new RegisteredRegion(memory, new RemoteKey(ownerId, keyId, base, memory.capacity(), access,
                    parts), this, java.util.Collections.unmodifiableMap(handles));
            for (RegionHandle h : handles.values()) {
                h.registered(keyId, access);
            }
            if (regions.putIfAbsent(keyId, region) != null) { // another registration drew the same 64 random bits
                throw new dev.fenceline.FencelineException("worker '" + ownerName + "': key id drawn twice");
            }
        } catch (RuntimeException e) { // no region half made: its handles go, and it is not in the table
            handles.values().forEach(RegionHandle::close);
            if (e instanceof dev.fenceline.FencelineException) {
                throw e;
            }
            throw new dev.fenceline.FencelineException("worker '" + ownerName + "' could not register a region with"
                    + " its transports " + handles.keySet() + ": " + e.getMessage(), e);
        }
        if (!handles.isEmpty()) {
            byAddress.put(base, region); // the same memory registered again: the newest registration
        }
        if (closedAll) { // closeAll ran meanwhile: it may have missed this region, so close it here
            region.close();
            throw closedError();
        }
        return region;
    }

    private dev.fenceline.EndpointClosedException closedError() {
        return new dev.fenceline.EndpointClosedException("worker '" + ownerName + "' is closed: no region is"
                + " registered or allocated any more");
    }

    /**
     * @param bytes the length
     * @return a zeroed, 64-byte aligned region
     */
    public MemoryRegion allocate(long bytes) {
        return allocate(bytes, Access.all());
    }

    /**
     * @param bytes the length
     * @param access what peers may do to it, at least one
     * @return a zeroed, 64-byte aligned region
     */
    public MemoryRegion allocate(long bytes, Set<Access> access) {
        if (access.isEmpty()) {
            throw new IllegalArgumentException("a region must permit some access (READ, WRITE, ATOMIC)");
        }
        if (bytes < 1 || bytes > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("cannot allocate " + bytes + " bytes: the length must be in [1, "
                    + (Integer.MAX_VALUE - 64) + "]");
        }
        if (closedAll) {
            throw closedError(); // before a transport makes memory to share (a segment file, say)
        }
        RegionTransports t = transports;
        RegionTransports.Shared shared = t == null ? null : t.allocateShared(bytes);
        if (shared != null) {
            return register(shared.memory().buffer(), shared, access); // closes the shared memory if it fails
        }
        // Cache-line alignment: over-allocate and slice at the first 64-byte boundary.
        ByteBuffer raw = ByteBuffer.allocateDirect((int) bytes + 63);
        int skip = (int) (-PlatformDependent.directBufferAddress(raw) & 63);
        return register(raw.position(skip).limit(skip + (int) bytes).slice(), null, access);
    }

    void closed(RegisteredRegion region) {
        byAddress.remove(region.address(), region);
        long k = region.remoteKey().keyId();
        closedKeys.add(k);
        regions.remove(k);
        if (lastResolved == region) {
            lastResolved = null; // its memory is not kept for the hint (a racing resolve's is let go at its next miss)
        }
    }

    /**
     * Per put or get on a lane whose zero-copy needs registered memory: a lookup by address.
     */
    @Override
    public RegionHandle handle(ByteBuffer local, String transport) {
        if (!local.isDirect()) {
            return null;
        }
        long at = PlatformDependent.directBufferAddress(local) + local.position();
        Map.Entry<Long, RegisteredRegion> e = byAddress.floorEntry(at);
        if (e == null) {
            return null;
        }
        RegisteredRegion r = e.getValue();
        if (r.isClosed() || at - r.address() > r.length() - local.remaining()) {
            return null;
        }
        return r.handle(transport);
    }

    /** Closes every region (the worker is closing); none is registered or allocated after this. */
    public void closeAll() {
        closedAll = true; // before the walk: a registration it misses sees this, and closes its region
        for (RegisteredRegion r : regions.values()) {
            r.close();
        }
        slowHandlers.close();
    }

    /**
     * @param id the message id
     * @param handler the handler, or null to remove it
     */
    public void setHandler(int id, ActiveMessageHandler handler) {
        checkAmId(id);
        handlers.set(id, handler);
    }

    /**
     * @param id a message id
     * @throws ActiveMessageException if it is out of range
     */
    public static void checkAmId(int id) {
        if (id < 0 || id > MAX_AM_ID) {
            throw new ActiveMessageException("active-message id " + id + " outside [0, " + MAX_AM_ID + "]");
        }
    }

    /** @return the number of open regions */
    public int openRegions() {
        return regions.size();
    }

    /**
     * The region last resolved (any thread): operations come in runs on one region, and this spares
     * each a boxed key and a map lookup. A hint, checked like the map's answer: a key id is never
     * used twice, and a closed region is closed here too.
     */
    private volatile RegisteredRegion lastResolved;

    private RegisteredRegion resolve(long keyId, long address, long bytes, int align, Access needed) {
        RegisteredRegion r = lastResolved;
        if (r == null || r.remoteKey().keyId() != keyId) {
            r = regions.get(keyId);
            if (r != null) {
                lastResolved = r;
            }
        }
        if (r == null || r.isClosed()) {
            if (r != null && lastResolved == r) {
                lastResolved = null;
            }
            String key = String.format("%04x..", keyId >>> 48);
            if (r != null || closedKeys.contains(keyId)) { // found closed: also while its close is under way
                throw new RemoteAccessException(Reason.REGION_CLOSED,
                        "region of key " + key + " at worker '" + ownerName + "' is closed");
            }
            throw new RemoteAccessException(Reason.UNKNOWN_KEY,
                    "key " + key + " is not registered at worker '" + ownerName + "' (or was closed long ago)");
        }
        if (!r.remoteKey().permits(needed)) { // what was registered, whatever the peer's key claims
            throw denied(r.remoteKey(), needed, ownerName);
        }
        r.remoteKey().checkBounds(address, bytes);
        if (align > 1 && (address & (align - 1)) != 0) {
            throw misaligned(address, align);
        }
        return r;
    }

    /**
     * @param key the region's key
     * @param needed the access an operation needs
     * @param owner the owning worker's name
     * @return the error for an operation the region was not registered for
     */
    public static RemoteAccessException denied(RemoteKey key, Access needed, String owner) {
        return new RemoteAccessException(Reason.ACCESS_DENIED, "the region of key " + key.shortKey() + " at worker '"
                + owner + "' was registered for " + key.access() + ", not " + needed);
    }

    /**
     * @param address the address
     * @param width the atomic's width
     * @return the error for a misaligned atomic
     */
    public static RemoteAccessException misaligned(long address, int width) {
        return new RemoteAccessException(Reason.MISALIGNED,
                String.format("atomic of %d bytes at address 0x%x is not %d-byte aligned", width, address, width));
    }

    // A region closed concurrently keeps its memory reachable through r, so a racing access is safe.
    @Override
    public void put(long keyId, long address, ByteBuffer src) {
        RegisteredRegion r = resolve(keyId, address, src.remaining(), 1, Access.WRITE);
        r.memory().put((int) (address - r.address()), src, src.position(), src.remaining());
    }

    @Override
    public void put(long keyId, long address, ByteBuffer[] parts) {
        long total = 0;
        for (ByteBuffer b : parts) {
            total += b.remaining();
        }
        RegisteredRegion r = resolve(keyId, address, total, 1, Access.WRITE);
        int at = (int) (address - r.address());
        for (ByteBuffer b : parts) {
            int n = b.remaining();
            r.memory().put(at, b, b.position(), n);
            at += n;
        }
    }

    @Override
    public void get(long keyId, long address, ByteBuffer dst) {
        RegisteredRegion r = resolve(keyId, address, dst.remaining(), 1, Access.READ);
        dst.put(dst.position(), r.memory(), (int) (address - r.address()), dst.remaining());
    }

    @Override
    public long atomic(long keyId, long address, int width, AtomicOp op, long operand) {
        checkWidth(width);
        RegisteredRegion r = resolve(keyId, address, width, width, Access.ATOMIC);
        int i = (int) (address - r.address());
        ByteBuffer m = r.memory();
        if (width == 4) {
            int v = (int) operand;
            return switch (op) {
                case ADD -> (int) INT.getAndAdd(m, i, v);
                case AND -> (int) INT.getAndBitwiseAnd(m, i, v);
                case OR -> (int) INT.getAndBitwiseOr(m, i, v);
                case XOR -> (int) INT.getAndBitwiseXor(m, i, v);
                case SWAP -> (int) INT.getAndSet(m, i, v);
            };
        }
        return switch (op) {
            case ADD -> (long) LONG.getAndAdd(m, i, operand);
            case AND -> (long) LONG.getAndBitwiseAnd(m, i, operand);
            case OR -> (long) LONG.getAndBitwiseOr(m, i, operand);
            case XOR -> (long) LONG.getAndBitwiseXor(m, i, operand);
            case SWAP -> (long) LONG.getAndSet(m, i, operand);
        };
    }

    @Override
    public long compareAndSwap(long keyId, long address, int width, long expected, long desired) {
        checkWidth(width);
        RegisteredRegion r = resolve(keyId, address, width, width, Access.ATOMIC);
        int i = (int) (address - r.address());
        if (width == 4) {
            return (int) INT.compareAndExchange(r.memory(), i, (int) expected, (int) desired);
        }
        return (long) LONG.compareAndExchange(r.memory(), i, expected, desired);
    }

    private static void checkWidth(int width) {
        if (width != 4 && width != 8) {
            throw new RemoteAccessException(Reason.INVALID_OPERATION, "atomic width " + width + " is not 4 or 8");
        }
    }

    @Override
    public void activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
        checkAmId(id);
        ActiveMessageHandler h = handlers.get(id);
        if (h == null) {
            throw new ActiveMessageException("no handler for active-message id " + id + " at worker '" + ownerName + "'");
        }
        long started = slowHandlers.start(id);
        try {
            h.onMessage(readOnly(header), readOnly(payload));
        } catch (Throwable e) { // an Error too: the origin gets a typed answer, the transport's thread lives on
            if (e instanceof VirtualMachineError) {
                org.slf4j.LoggerFactory.getLogger(RegistrationTable.class).error(
                        "active-message handler {} at worker '{}' threw {}", id, ownerName, e.toString());
            }
            ActiveMessageException ame = new ActiveMessageException(
                    "handler for active-message id " + id + " at worker '" + ownerName + "' threw " + e);
            ame.initCause(e);
            throw ame;
        } finally {
            slowHandlers.finished(started);
        }
    }

    /**
     * What the handler gets: a transport's read-only, big-endian view made for this call as it is
     * (a view of its own for each message costs an object, where a read-only copy of it cost a
     * second); anything else as a read-only view of it, big-endian like every fresh buffer.
     */
    private static ByteBuffer readOnly(ByteBuffer b) {
        return b.isReadOnly() && b.order() == java.nio.ByteOrder.BIG_ENDIAN ? b : b.asReadOnlyBuffer();
    }
}
