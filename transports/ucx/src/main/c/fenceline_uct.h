/*
 * The native half of the ucx transport: a small library compiled at build time against the
 * installed UCT headers. UCT's data path is inline dispatch through each iface's ops table and its
 * parameters are structs that change between releases, so everything that touches a UCT struct
 * lives here, compiled against the headers in use; Java sees only the functions below, plain
 * integers and addresses, and the three layouts of this file (an operation block, an event
 * record and a worker's status), which it checks at load against flu_layout().
 *
 * Threading: a flu_worker and everything opened on it belong to one thread (UCT is opened in
 * single-thread mode). Callbacks (active messages, completions, pending, peer errors) run inside
 * flu_progress on that thread and append records to the worker's event buffer.
 */
#ifndef FENCELINE_UCT_H
#define FENCELINE_UCT_H

#include <stdint.h>
#include <stddef.h>

/* Bumped whenever a function, a layout or a code below changes meaning. */
#define FLU_ABI 5

/* Operation kinds (flu_op.kind). */
enum {
    FLU_PUT_SHORT = 1, FLU_PUT_BCOPY, FLU_PUT_ZCOPY,
    FLU_GET_SHORT, FLU_GET_BCOPY, FLU_GET_ZCOPY,
    FLU_ATOMIC_POST, FLU_ATOMIC_FETCH, FLU_CSWAP,
    FLU_AM_SHORT, FLU_AM_BCOPY,
    FLU_FLUSH, FLU_FENCE, FLU_PENDING
};

/* Atomic operations (flu_op.atomic_op), independent of UCT's enum. */
enum { FLU_AMO_ADD = 0, FLU_AMO_AND, FLU_AMO_OR, FLU_AMO_XOR, FLU_AMO_SWAP, FLU_AMO_CSWAP };

/* Capability bits of flu_iface_attr(FLU_ATTR_CAPS), independent of UCT's flags. */
enum {
    FLU_CAP_PUT_SHORT = 1 << 0, FLU_CAP_PUT_BCOPY = 1 << 1, FLU_CAP_PUT_ZCOPY = 1 << 2,
    FLU_CAP_GET_SHORT = 1 << 3, FLU_CAP_GET_BCOPY = 1 << 4, FLU_CAP_GET_ZCOPY = 1 << 5,
    FLU_CAP_AM_SHORT = 1 << 6, FLU_CAP_AM_BCOPY = 1 << 7, FLU_CAP_AM_ZCOPY = 1 << 8,
    FLU_CAP_PENDING = 1 << 9, FLU_CAP_CONNECT_TO_IFACE = 1 << 10, FLU_CAP_CONNECT_TO_EP = 1 << 11,
    FLU_CAP_PEER_FAILURE = 1 << 12, FLU_CAP_ATOMIC_CPU = 1 << 13, FLU_CAP_ATOMIC_DEVICE = 1 << 14,
    FLU_CAP_EVENT_FD = 1 << 15, FLU_CAP_AM_DUP = 1 << 16,
    /* memory domain */
    FLU_CAP_MD_ALLOC = 1 << 20, FLU_CAP_MD_REG = 1 << 21, FLU_CAP_MD_NEED_MEMH = 1 << 22,
    FLU_CAP_MD_NEED_RKEY = 1 << 23, FLU_CAP_MD_RKEY_PTR = 1 << 24
};

/*
 * Indexes of flu_iface_attr. Atomic masks have bit (1 << FLU_AMO_x) per operation; they hold only
 * what the iface claims and, where it can be tried (an iface that connects to itself), what gave
 * the right answer when tried on a scratch word at open: UCX 1.13.1's shared-memory transports
 * claim fetching AND, OR and XOR but store the wrong value.
 */
enum {
    FLU_ATTR_CAPS = 0,
    FLU_ATTR_PUT_MAX_SHORT, FLU_ATTR_PUT_MAX_BCOPY, FLU_ATTR_PUT_MIN_ZCOPY, FLU_ATTR_PUT_MAX_ZCOPY,
    FLU_ATTR_GET_MAX_SHORT, FLU_ATTR_GET_MAX_BCOPY, FLU_ATTR_GET_MIN_ZCOPY, FLU_ATTR_GET_MAX_ZCOPY,
    FLU_ATTR_AM_MAX_SHORT, FLU_ATTR_AM_MAX_BCOPY, FLU_ATTR_AM_MAX_ZCOPY, FLU_ATTR_AM_MAX_HDR,
    FLU_ATTR_ATOMIC32_POST, FLU_ATTR_ATOMIC32_FETCH, FLU_ATTR_ATOMIC64_POST, FLU_ATTR_ATOMIC64_FETCH,
    FLU_ATTR_DEVICE_ADDR_LEN, FLU_ATTR_IFACE_ADDR_LEN, FLU_ATTR_EP_ADDR_LEN,
    FLU_ATTR_RKEY_PACKED_SIZE, FLU_ATTR_MAX_ALLOC, FLU_ATTR_MAX_REG, FLU_ATTR_MAX_EPS,
    FLU_ATTR_LATENCY_NS, FLU_ATTR_BANDWIDTH_MBS,
    /* Atomics the iface claims but that gave wrong results when tried at open: bit (kind * 8 + op),
     * kind 0 = 32-bit post, 1 = 32-bit fetch, 2 = 64-bit post, 3 = 64-bit fetch. Their bits are
     * cleared from the four masks above. */
    FLU_ATTR_ATOMIC_REFUTED,
    /* 1 if the atomics were tried at open (the iface connects to itself), 0 if taken on trust. */
    FLU_ATTR_ATOMIC_VERIFIED,
    FLU_ATTR_COUNT
};

/* Memory access bits of flu_mem_reg / flu_mem_alloc. */
enum { FLU_ACCESS_READ = 1, FLU_ACCESS_WRITE = 2, FLU_ACCESS_ATOMIC = 4 };

/*
 * One operation, written by the caller before flu_post. For a fetch that completes at once the
 * fetched value is in result on return; otherwise it arrives in the completion event.
 */
typedef struct flu_op {
    uint64_t local;      /* local buffer address (put source, get destination, message payload) */
    uint64_t length;     /* bytes */
    uint64_t remote;     /* remote address; for FLU_AM_BCOPY, a second piece to copy after local, or 0 */
    uint64_t rkey;       /* flu_rkey_value of the target region */
    uint64_t memh;       /* flu_mem handle of the local buffer (zero-copy), or 0 */
    uint64_t token;      /* echoed in the completion or ready event */
    uint64_t value;      /* atomic operand, swap value, or active-message header */
    uint64_t compare;    /* compare-and-swap expected value; for FLU_AM_BCOPY, the second piece's bytes */
    uint64_t result;     /* out: a fetched value that arrived at once */
    uint32_t kind;       /* FLU_PUT_SHORT ... */
    uint32_t atomic_op;  /* FLU_AMO_x */
    uint32_t width;      /* 4 or 8 */
    uint32_t am_id;      /* active-message id */
} flu_op_t;

/* Event types (flu_event.type). */
enum { FLU_EV_COMPLETION = 1, FLU_EV_AM = 2, FLU_EV_READY = 3, FLU_EV_EP_ERROR = 4 };

/*
 * One record of the event buffer: this header, then length payload bytes (for FLU_EV_AM), padded
 * to a multiple of 8. For a completion, value is a fetched value; for FLU_EV_EP_ERROR, token is
 * the failed endpoint's handle; for FLU_EV_AM, token is the receiving iface's handle.
 */
typedef struct flu_event {
    uint8_t type;
    int8_t status;
    uint8_t am_id;
    uint8_t pad;
    uint32_t length;
    uint64_t token;
    uint64_t value;
} flu_event_t;

/*
 * Where a worker's event buffer stands, kept by the library and read (and emptied) by Java in place,
 * so that a pass of the progress loop costs one call (flu_progress) rather than one per question.
 * Only the worker's thread touches it. Emptying is storing 0 in length.
 */
typedef struct flu_status {
    uint64_t events;   /* the buffer's address; it moves when the buffer grows */
    uint64_t length;   /* bytes of records in it */
    int64_t dropped;   /* records lost for lack of memory */
} flu_status_t;

/* Field ids of flu_layout. */
enum {
    FLU_L_OP_SIZE = 0, FLU_L_OP_LOCAL, FLU_L_OP_LENGTH, FLU_L_OP_REMOTE, FLU_L_OP_RKEY, FLU_L_OP_MEMH,
    FLU_L_OP_TOKEN, FLU_L_OP_VALUE, FLU_L_OP_COMPARE, FLU_L_OP_RESULT, FLU_L_OP_KIND,
    FLU_L_OP_ATOMIC_OP, FLU_L_OP_WIDTH, FLU_L_OP_AM_ID,
    FLU_L_EV_SIZE, FLU_L_EV_TYPE, FLU_L_EV_STATUS, FLU_L_EV_AM_ID, FLU_L_EV_LENGTH, FLU_L_EV_TOKEN,
    FLU_L_EV_VALUE,
    /* the UCS status codes Java acts on */
    FLU_L_STATUS_INPROGRESS, FLU_L_STATUS_NO_RESOURCE, FLU_L_STATUS_BUSY, FLU_L_STATUS_UNSUPPORTED,
    FLU_L_STATUS_EXCEEDS_LIMIT, FLU_L_STATUS_NO_DEVICE,
    FLU_L_ATTR_COUNT,
    FLU_L_ST_SIZE, FLU_L_ST_EVENTS, FLU_L_ST_LENGTH, FLU_L_ST_DROPPED,
    FLU_L_COUNT
};

typedef struct flu_worker flu_worker_t;
typedef struct flu_iface flu_iface_t;
typedef struct flu_ep flu_ep_t;
typedef struct flu_mem flu_mem_t;
typedef struct flu_rkey flu_rkey_t;

int flu_abi(void);
long flu_layout(int field);
/* The UCT headers' version this library was compiled against: major << 16 | minor << 8 | patch. */
int flu_header_version(void);
const char *flu_status_string(int status);

/* Every component, memory domain, transport and device: one "component\tmd\ttl\tdevice\ttype\n" line
 * each. Returns the length the full list needs (call again with a bigger buffer if larger than cap),
 * or a negative status. */
long flu_list_resources(char *buf, long cap);

flu_worker_t *flu_worker_create(void);
void flu_worker_destroy(flu_worker_t *w);
/* The status and message of the last call that failed on the calling thread (w names the worker; the
 * memory-domain calls run on callers' threads, each reading its own failure). */
int flu_last_status(flu_worker_t *w);
const char *flu_last_error(flu_worker_t *w);
/* Drives every iface of w; returns how many events UCT progressed. */
long flu_progress(flu_worker_t *w);

/*
 * Copies n bytes by address, for a large put or get through a peer's shared-memory segment on the
 * calling thread (any thread: it touches no UCT object). The CPU's string move, then a store
 * fence, so that every byte is visible before the caller's next store. A fault inside it ends the
 * process, as one inside UCT's own stores into a peer's segment does.
 */
void flu_copy(void *dst, const void *src, size_t n);
/* The worker's flu_status, for the life of the worker. */
flu_status_t *flu_worker_status(flu_worker_t *w);

/*
 * Sleeping when idle: 1 if every iface of w has an event fd (then flu_worker_wait can sleep on
 * them), else 0. flu_worker_wait arms every iface and waits until one has an event, flu_worker_wake
 * is called, or timeout_ns pass; it returns at once if events are pending (UCT's arm says busy) or a
 * wake came before it. Returns 1 if it slept and was woken or timed out, 0 if it returned at once,
 * or a negative status. flu_worker_wake may be called from any thread while w lives.
 */
int flu_worker_can_wait(flu_worker_t *w);
int flu_worker_wait(flu_worker_t *w, long timeout_ns);
void flu_worker_wake(flu_worker_t *w);

/* spec: "component\tmd\ttl\tdevice"; config: "KEY=VALUE\n" lines for the iface's UCT config, or "". */
flu_iface_t *flu_iface_open(flu_worker_t *w, const char *spec, const char *config);
void flu_iface_close(flu_iface_t *iface);
long flu_iface_attr(flu_iface_t *iface, int index);
/* Writes [u16 device length][u16 iface length][device address][iface address]; returns the length,
 * or a negative status if cap is too small. */
long flu_iface_address(flu_iface_t *iface, uint8_t *buf, long cap);
/* 1 if the address (as flu_iface_address wrote it) is well formed and reachable from iface, else 0. */
int flu_iface_reachable(flu_iface_t *iface, const uint8_t *addr, long len);
/* The iface's event fd, or a negative status. */
long flu_iface_event_fd(flu_iface_t *iface);
int flu_iface_event_arm(flu_iface_t *iface);

flu_ep_t *flu_ep_create(flu_iface_t *iface, const uint8_t *addr, long len);
/*
 * Connect-to-endpoint transports (rc, dc, tcp in that mode): an endpoint made without a peer, whose
 * address (flu_ep_address) the peer connects its own endpoint to, and which is then connected to
 * the peer's endpoint (flu_ep_connect, with the peer's iface address as flu_iface_address wrote it,
 * for its device address, and the peer endpoint's address).
 */
flu_ep_t *flu_ep_create_unconnected(flu_iface_t *iface);
long flu_ep_address(flu_ep_t *ep, uint8_t *buf, long cap);
int flu_ep_connect(flu_ep_t *ep, const uint8_t *iface_addr, long iface_len, const uint8_t *ep_addr, long ep_len);
void flu_ep_destroy(flu_ep_t *ep);
/* Starts op on ep; returns UCS_OK (done), UCS_INPROGRESS (a completion event follows),
 * UCS_ERR_NO_RESOURCE (nothing done; add FLU_PENDING for a ready event), or an error. */
int flu_post(flu_ep_t *ep, flu_op_t *op);

/*
 * Memory of the iface's memory domain. Allocation, registration, packing and freeing touch the
 * memory domain only, never the worker, so they may run on any thread while another progresses
 * the worker, as long as the caller does not run two of them at once on one domain.
 */
flu_mem_t *flu_mem_alloc(flu_iface_t *iface, long length, int access);
flu_mem_t *flu_mem_reg(flu_iface_t *iface, long address, long length, int access);
long flu_mem_address(flu_mem_t *m);
long flu_mem_length(flu_mem_t *m);
/* The UCT memory handle, for flu_op.memh. */
long flu_mem_handle(flu_mem_t *m);
long flu_mem_pack(flu_mem_t *m, uint8_t *buf, long cap);
void flu_mem_free(flu_mem_t *m);

flu_rkey_t *flu_rkey_unpack(flu_iface_t *iface, const uint8_t *buf, long len);
long flu_rkey_value(flu_rkey_t *r);
/* A local address through which the region may be reached directly, or 0. */
long flu_rkey_ptr(flu_rkey_t *r, long remote);
void flu_rkey_release(flu_rkey_t *r);

#endif
