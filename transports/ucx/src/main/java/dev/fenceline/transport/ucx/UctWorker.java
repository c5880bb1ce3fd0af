package dev.fenceline.transport.ucx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jnr.ffi.Pointer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A UCT worker and what is opened on it, opened in serialized mode: one thread at a time uses
 * it and everything it opened (the ucx transport's progress agent, on its own thread or on one it
 * is lent to), handed over with a happens-before edge. Operations are written into one operation block in native memory and
 * started with one call; callbacks run inside {@link #progress()} and are read back as records by
 * {@link #drain}, so nothing crosses from C into Java by callback.
 */
final class UctWorker implements AutoCloseable {
    private final Shim shim;
    private final long handle;
    private final Pointer opMemory; // kept reachable: the block is freed with it
    final UnsafeBuffer op;
    final long opAddress;
    private final UnsafeBuffer events = new UnsafeBuffer(0, 0);
    /** The library's status of this worker (flu_status_t), read and emptied here rather than by calls. */
    private final UnsafeBuffer status;
    private final List<UctIface> ifaces = new ArrayList<>();
    private boolean draining;
    private boolean closed;
    /** Guards {@link #wakesEnded}: other threads wake the worker while its own closes it. */
    private final Object wakes = new Object();
    private boolean wakesEnded;

    private UctWorker(Shim shim, long handle) {
        this.shim = shim;
        this.handle = handle;
        this.opMemory = UcxNative.allocate(Layout.OP_SIZE);
        this.opAddress = opMemory.address();
        this.op = new UnsafeBuffer(opAddress, Layout.OP_SIZE);
        this.status = new UnsafeBuffer(shim.flu_worker_status(handle), Layout.ST_SIZE);
    }

    /**
     * @return a new worker
     * @throws UcxUnavailableException if UCX is not available
     * @throws UctException if UCT cannot create one
     */
    static UctWorker create() {
        Shim shim = UcxNative.shim();
        long w = shim.flu_worker_create();
        if (w == 0) {
            throw new UctException("uct_worker_create", -1, "UCT could not create a worker");
        }
        return new UctWorker(shim, w);
    }

    Shim shim() {
        return shim;
    }

    /**
     * Opens an iface on a resource.
     *
     * @param resource the resource
     * @param config UCT settings of the iface (the names {@code ucx_info -c} lists for it, without the
     *     {@code UCX_<TL>_} prefix), or empty
     * @return the iface
     * @throws UctException if the host has no such resource, or UCT refuses (a setting, the device)
     */
    UctIface open(UctResource resource, Map<String, String> config) {
        checkOpen();
        if (!UcxNative.resources().contains(resource)) {
            throw new UctException("opening " + resource, UctStatus.NO_DEVICE, "this host has no UCT resource "
                    + resource + " (" + resource.component() + "/" + resource.memoryDomain() + "); it has "
                    + UcxNative.resources());
        }
        StringBuilder lines = new StringBuilder();
        config.forEach((k, v) -> lines.append(k).append('=').append(v).append('\n'));
        long i = shim.flu_iface_open(handle, resource.spec(), lines.toString());
        if (i == 0) {
            throw lastError("opening " + resource);
        }
        UctIface iface = new UctIface(this, i, resource, UctIfaceAttributes.read(shim, i));
        ifaces.add(iface);
        return iface;
    }

    void forget(UctIface iface) {
        ifaces.remove(iface);
    }

    /**
     * Drives every iface once: sends, receives, and the callbacks that become events.
     *
     * @return how many events UCT progressed
     */
    int progress() {
        if (draining) {
            throw new IllegalStateException("progress() inside drain(): the events being read would move");
        }
        return (int) shim.flu_progress(handle);
    }

    /**
     * Reports every event gathered since the last drain, in order, then forgets them. A handler that
     * throws does not cost the events behind it (completions and answers other operations wait
     * for): they are reported, then the first failure is thrown.
     *
     * @param handler where they go; it may post operations but not call {@link #progress()}
     * @return how many events
     * @throws UctEventsLost if events were lost (the native library ran out of memory for them, or a
     *     record overran the buffer)
     * @throws RuntimeException the first a handler threw, once every event was reported (an
     *     {@link Error} too: the events behind it are other peers' answers and requests)
     */
    int drain(UctEventHandler handler) {
        long length = status.getLong(Layout.ST_LENGTH);
        if (length == 0) {
            lostEvents(null);
            return 0;
        }
        long address = status.getLong(Layout.ST_EVENTS);
        events.wrap(address, (int) length);
        draining = true;
        int n = 0;
        Throwable failed = null;
        try {
            int at = 0;
            while (true) {
                // A handler may send, and a transport that delivers inside the send (self) appends
                // events meanwhile, to a buffer that may have moved (the old one stays mapped until
                // the next progress): they are reported in this drain too.
                long nowLength = status.getLong(Layout.ST_LENGTH);
                long nowAddress = status.getLong(Layout.ST_EVENTS);
                if (nowLength != length || nowAddress != address) {
                    length = nowLength;
                    address = nowAddress;
                    events.wrap(address, (int) length);
                }
                if (at + Layout.EV_SIZE > length) {
                    break;
                }
                int type = events.getByte(at + Layout.EV_TYPE);
                int outcome = events.getByte(at + Layout.EV_STATUS);
                int payload = events.getInt(at + Layout.EV_LENGTH);
                long token = events.getLong(at + Layout.EV_TOKEN);
                if (payload < 0 || at + Layout.EV_SIZE + (long) payload > length) {
                    throw new UctEventsLost("the event record at " + at + " of " + length + " bytes claims " + payload
                            + " bytes: the records from there on are lost");
                }
                try {
                    switch (type) {
                        case Layout.EV_COMPLETION -> handler.completed(token, outcome,
                                events.getLong(at + Layout.EV_VALUE));
                        case Layout.EV_AM -> handler.activeMessage(token, events.getByte(at + Layout.EV_AM_ID) & 0xff,
                                events, at + Layout.EV_SIZE, payload);
                        case Layout.EV_READY -> handler.ready(token);
                        case Layout.EV_EP_ERROR -> handler.endpointFailed(token, outcome);
                        default -> throw new IllegalStateException("unknown event type " + type + " at " + at);
                    }
                } catch (RuntimeException | Error e) {
                    if (failed == null) {
                        failed = e;
                    }
                }
                n++;
                at += Layout.EV_SIZE + ((payload + 7) & ~7);
            }
        } finally {
            draining = false;
            status.putLong(Layout.ST_LENGTH, 0);
        }
        lostEvents(failed);
        if (failed instanceof RuntimeException e) {
            throw e;
        }
        if (failed != null) {
            throw (Error) failed;
        }
        return n;
    }

    /**
     * Throws once for events the native library dropped since the last report (it ran out of
     * memory for them), then counts afresh.
     *
     * @param failed a handler's failure in the same drain, kept with the report, or null
     */
    private void lostEvents(Throwable failed) {
        long dropped = status.getLong(Layout.ST_DROPPED);
        if (dropped != 0) {
            status.putLong(Layout.ST_DROPPED, 0);
            UctEventsLost lost = new UctEventsLost(dropped + " events of the UCT worker were lost for lack of native"
                    + " memory");
            if (failed != null) {
                lost.addSuppressed(failed);
            }
            throw lost;
        }
    }

    /** @return whether {@link #await} can sleep on the ifaces' events (every iface has an event fd) */
    boolean canWait() {
        return shim.flu_worker_can_wait(handle) == 1;
    }

    /**
     * Sleeps until an iface has an event, {@link #wake} is called, or the time passes; returns at
     * once if events are pending or a wake came first. On the worker's thread, between progress calls.
     *
     * @param timeoutNanos the longest sleep
     * @return true if it slept, false if it returned at once
     * @throws UctException if an iface cannot be armed
     */
    boolean await(long timeoutNanos) {
        int r = shim.flu_worker_wait(handle, timeoutNanos);
        if (r < 0) {
            throw new UctException("waiting on the UCT worker's events", r, UctStatus.describe(r));
        }
        return r == 1;
    }

    /**
     * Ends a current or the next {@link #await}. Any thread, at any time: once the worker closed it
     * does nothing (the native worker, and the descriptor it writes to, are gone; the number may name
     * another file by then).
     */
    void wake() {
        synchronized (wakes) {
            if (!wakesEnded) {
                shim.flu_worker_wake(handle);
            }
        }
    }

    UctException lastError(String what) {
        return new UctException(what, shim.flu_last_status(handle), shim.flu_last_error(handle));
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the UCT worker is closed");
        }
    }

    /** Closes every iface (and their endpoints) and the worker. Memory and keys must be freed first. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        synchronized (wakes) { // a wake under way ends first; none starts after
            wakesEnded = true;
        }
        for (UctIface i : List.copyOf(ifaces)) {
            i.close();
        }
        shim.flu_worker_destroy(handle);
    }
}
