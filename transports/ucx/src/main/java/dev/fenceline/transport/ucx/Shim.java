package dev.fenceline.transport.ucx;

import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;

/**
 * The functions of {@code libfenceline-uct}, the C library this module compiles against the
 * installed UCT headers ({@code src/main/c/fenceline_uct.h} is the contract). Handles and addresses
 * are {@code long}. No function takes six integer arguments: jnr-ffi's x86-64 stub corrupts the
 * sixth (jnr/jnr-ffi#181), so operations go through an operation block in native memory instead.
 *
 * <p>Public at the class-file level because jnr-ffi generates the implementation in a class
 * loader of its own; it is not part of the module's API.
 */
public interface Shim {
    /** @return the ABI of the native library ({@code FLU_ABI}) */
    int flu_abi();

    /**
     * @param field a {@code FLU_L_*} id
     * @return its offset, size or status code
     */
    long flu_layout(int field);

    /**
     * Copies by address (the CPU's string move, then a store fence); touches no UCT object, so any
     * thread may call it.
     *
     * @param dst the first byte written
     * @param src the first byte read
     * @param n bytes
     */
    void flu_copy(long dst, long src, long n);

    /** @return the UCT headers' version: {@code major << 16 | minor << 8 | patch} */
    int flu_header_version();

    /**
     * @param status a UCS status code
     * @return its text
     */
    String flu_status_string(int status);

    /**
     * @param buf the output
     * @param cap its size
     * @return the length the list needs, or a negative status
     */
    long flu_list_resources(@Out byte[] buf, long cap);

    /** @return a worker, or 0 */
    long flu_worker_create();

    /** @param worker the worker */
    void flu_worker_destroy(long worker);

    /**
     * @param worker the worker
     * @return the status of the last call that failed on this thread
     */
    int flu_last_status(long worker);

    /**
     * @param worker the worker
     * @return the message of the last call that failed on this thread
     */
    String flu_last_error(long worker);

    /**
     * @param worker the worker
     * @return how many events UCT progressed
     */
    long flu_progress(long worker);

    /**
     * @param worker the worker
     * @return the address of its status ({@code flu_status_t}: the event buffer's address, its length
     *     and losses), valid while the worker lives; read and emptied in place on the worker's thread
     */
    long flu_worker_status(long worker);

    /**
     * @param worker the worker
     * @return 1 if every iface has an event fd to sleep on
     */
    int flu_worker_can_wait(long worker);

    /**
     * @param worker the worker
     * @param timeoutNanos the longest wait
     * @return 1 if it slept, 0 if events were pending, or a negative status
     */
    int flu_worker_wait(long worker, long timeoutNanos);

    /** @param worker the worker, from any thread */
    void flu_worker_wake(long worker);

    /**
     * @param worker the worker
     * @param spec "component\tmd\ttl\tdevice"
     * @param config "KEY=VALUE\n" lines
     * @return an iface, or 0
     */
    long flu_iface_open(long worker, String spec, String config);

    /** @param iface the iface */
    void flu_iface_close(long iface);

    /**
     * @param iface the iface
     * @param index a {@code FLU_ATTR_*} index
     * @return the attribute
     */
    long flu_iface_attr(long iface, int index);

    /**
     * @param iface the iface
     * @param buf the output
     * @param cap its size
     * @return the address length, or a negative status
     */
    long flu_iface_address(long iface, @Out byte[] buf, long cap);

    /**
     * @param iface the iface
     * @param address a peer's address
     * @param length its length
     * @return 1 if well formed and reachable
     */
    int flu_iface_reachable(long iface, @In byte[] address, long length);

    /**
     * @param iface the iface
     * @return its event fd, or a negative status
     */
    long flu_iface_event_fd(long iface);

    /**
     * @param iface the iface
     * @return a status
     */
    int flu_iface_event_arm(long iface);

    /**
     * @param iface the iface
     * @param address a peer's address
     * @param length its length
     * @return an endpoint, or 0
     */
    long flu_ep_create(long iface, @In byte[] address, long length);

    /**
     * @param iface a connect-to-endpoint iface
     * @return an endpoint not yet connected, or 0
     */
    long flu_ep_create_unconnected(long iface);

    /**
     * @param ep an endpoint of a connect-to-endpoint iface
     * @param buf the output
     * @param cap its size
     * @return the address length, or a negative status
     */
    long flu_ep_address(long ep, @Out byte[] buf, long cap);

    /**
     * @param ep an unconnected endpoint
     * @param ifaceAddress the peer iface's address (for its device address), as flu_iface_address wrote it
     * @param ifaceLength its length
     * @param epAddress the peer endpoint's address
     * @param epLength its length
     * @return a status
     */
    int flu_ep_connect(long ep, @In byte[] ifaceAddress, long ifaceLength, @In byte[] epAddress, long epLength);

    /** @param ep the endpoint */
    void flu_ep_destroy(long ep);

    /**
     * @param ep the endpoint
     * @param op the operation block's address
     * @return a status
     */
    int flu_post(long ep, long op);

    /**
     * @param iface the iface
     * @param length bytes
     * @param access {@code FLU_ACCESS_*} bits
     * @return memory, or 0
     */
    long flu_mem_alloc(long iface, long length, int access);

    /**
     * @param iface the iface
     * @param address the memory's address
     * @param length bytes
     * @param access {@code FLU_ACCESS_*} bits
     * @return a registration, or 0
     */
    long flu_mem_reg(long iface, long address, long length, int access);

    /**
     * @param mem the memory
     * @return its address
     */
    long flu_mem_address(long mem);

    /**
     * @param mem the memory
     * @return its length
     */
    long flu_mem_length(long mem);

    /**
     * @param mem the memory
     * @return its UCT memory handle
     */
    long flu_mem_handle(long mem);

    /**
     * @param mem the memory
     * @param buf the output
     * @param cap its size
     * @return the packed key's length, or a negative status
     */
    long flu_mem_pack(long mem, @Out byte[] buf, long cap);

    /** @param mem the memory */
    void flu_mem_free(long mem);

    /**
     * @param iface the iface
     * @param key a packed key
     * @param length its length
     * @return an unpacked key, or 0
     */
    long flu_rkey_unpack(long iface, @In byte[] key, long length);

    /**
     * @param rkey the unpacked key
     * @return the value operations carry
     */
    long flu_rkey_value(long rkey);

    /**
     * @param rkey the unpacked key
     * @param remote a remote address
     * @return a local address that reaches it, or 0
     */
    long flu_rkey_ptr(long rkey, long remote);

    /** @param rkey the unpacked key */
    void flu_rkey_release(long rkey);
}
