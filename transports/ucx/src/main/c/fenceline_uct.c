/*
 * The native half of the ucx transport; the contract is in fenceline_uct.h.
 *
 * Every UCT struct is read and written here, against the headers this file is compiled with, so
 * the Java side holds no UCT offset. Addresses and keys that a peer sent are framed by Java and
 * checked here for length before UCT sees them; their contents are UCT's to interpret.
 */
#define _GNU_SOURCE /* ppoll */
#include "fenceline_uct.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <uct/api/uct.h>
#include <uct/api/tl.h>
#include <uct/api/version.h>
#include <ucs/async/async_fwd.h>

#define FLU_MAX_ADDRESS 1024 /* a device or iface address longer than this is refused */

typedef struct flu_am_arg {
    flu_iface_t *iface;
    uint8_t id;
} flu_am_arg_t;

/* A completion UCT calls back; pooled per worker, never freed while the worker lives. */
typedef struct flu_comp {
    uct_completion_t comp;
    flu_worker_t *w;
    uint64_t token;
    union {
        uint64_t r64;
        uint32_t r32;
    } result;
    uint32_t width;
    struct flu_comp *next;
} flu_comp_t;

typedef struct flu_pend {
    uct_pending_req_t req;
    flu_worker_t *w;
    uint64_t token;
    struct flu_pend *next;
} flu_pend_t;

struct flu_ep {
    uct_ep_h ep;
    flu_iface_t *iface;
    flu_ep_t *next;
};

/*
 * UCX 1.13's posix mapper names a segment by the first u64 of its iface address and of its packed
 * key: bit 63, a descriptor of the owner's, opened through /proc/<pid>/fd/<fd>; bit 62 without it, a
 * name under /dev/shm; neither, a file in a directory whose name it reads as a string from the bytes
 * that follow. A peer's directory would be one of its choosing (and with the default configuration,
 * which puts none in the address or the key, a read past the peer's bytes); a name under /dev/shm
 * may be a file any user of the host made. A descriptor through /proc opens only for a process this
 * one may inspect (its user's, unless it is privileged), so a peer's posix segment must carry bit 63;
 * a worker checks its own address for it when it opens posix (UCX's default, USE_PROC_LINK = y),
 * which also confirms the constant against the loaded library.
 */
#define FLU_POSIX_SEG_PROCFS (1ULL << 63)
/* Zeroed bytes behind a peer's address or key copied here, so that a parser reading past them reads ours. */
#define FLU_PEER_PADDING 64

struct flu_iface {
    flu_worker_t *w;
    uct_component_h component;
    uct_md_h md;
    uct_md_attr_t md_attr;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    flu_ep_t *eps;
    flu_iface_t *next;
    uint64_t amo[4];     /* verified masks: 32 post, 32 fetch, 64 post, 64 fetch (FLU_AMO bits) */
    uint64_t refuted;
    int verified;
    int posix;           /* UCT's posix: peers' segment names are checked (FLU_POSIX_SEG_*) */
    /* What an atomic self-test that never completed names, freed only once the iface is closed. */
    struct flu_mem *probe_mem;
    struct flu_rkey *probe_rkey;
    void *probe_scratch;
    flu_am_arg_t am_args[UCT_AM_ID_MAX];
};

/* Whether a posix segment id (the first 8 bytes at seg) names its segment by a descriptor through /proc. */
static int posix_named_by_proc(const uint8_t *seg) {
    uint64_t id;
    memcpy(&id, seg, sizeof(id));
    return (id & FLU_POSIX_SEG_PROCFS) != 0;
}

struct flu_mem {
    flu_iface_t *iface;
    int allocated;
    uct_allocated_memory_t alloc;
    uct_mem_h memh;
    void *address;
    size_t length;
};

struct flu_rkey {
    uct_component_h component;
    uct_rkey_bundle_t bundle;
};

/* The event buffer as bytes (its address is kept as an integer in the status Java reads). */
#define EVENTS(w) ((uint8_t *)(uintptr_t)(w)->st.events)

struct flu_worker {
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_component_h *components;
    unsigned num_components;
    flu_iface_t *ifaces;
    flu_status_t st; /* the event buffer (st.events), its length and losses, read by Java in place */
    size_t events_cap;
    /*
     * Buffers the events outgrew while Java may still read them: a drain's handler may send, and a
     * transport that delivers inside the send (self) appends events then; the handler's view of its
     * own message and the drain's place stay where they were. Freed at the next progress, which
     * never runs during a drain. Each growth doubles the buffer, so a few suffice.
     */
    uint8_t *retired[40];
    int num_retired;
    flu_comp_t *free_comps;
    flu_pend_t *free_pends;
    int wake_fd; /* an eventfd: flu_worker_wake ends a flu_worker_wait */
};

int flu_abi(void) {
    return FLU_ABI;
}

void flu_copy(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    /* A fast string's stores may land in any order among themselves: the sfence orders them all
       before the caller's next store. */
    __asm__ volatile("rep movsb\n\tsfence" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
    memcpy(dst, src, n);
    __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

long flu_layout(int field) {
    switch (field) {
    case FLU_L_OP_SIZE: return sizeof(flu_op_t);
    case FLU_L_OP_LOCAL: return offsetof(flu_op_t, local);
    case FLU_L_OP_LENGTH: return offsetof(flu_op_t, length);
    case FLU_L_OP_REMOTE: return offsetof(flu_op_t, remote);
    case FLU_L_OP_RKEY: return offsetof(flu_op_t, rkey);
    case FLU_L_OP_MEMH: return offsetof(flu_op_t, memh);
    case FLU_L_OP_TOKEN: return offsetof(flu_op_t, token);
    case FLU_L_OP_VALUE: return offsetof(flu_op_t, value);
    case FLU_L_OP_COMPARE: return offsetof(flu_op_t, compare);
    case FLU_L_OP_RESULT: return offsetof(flu_op_t, result);
    case FLU_L_OP_KIND: return offsetof(flu_op_t, kind);
    case FLU_L_OP_ATOMIC_OP: return offsetof(flu_op_t, atomic_op);
    case FLU_L_OP_WIDTH: return offsetof(flu_op_t, width);
    case FLU_L_OP_AM_ID: return offsetof(flu_op_t, am_id);
    case FLU_L_EV_SIZE: return sizeof(flu_event_t);
    case FLU_L_EV_TYPE: return offsetof(flu_event_t, type);
    case FLU_L_EV_STATUS: return offsetof(flu_event_t, status);
    case FLU_L_EV_AM_ID: return offsetof(flu_event_t, am_id);
    case FLU_L_EV_LENGTH: return offsetof(flu_event_t, length);
    case FLU_L_EV_TOKEN: return offsetof(flu_event_t, token);
    case FLU_L_EV_VALUE: return offsetof(flu_event_t, value);
    case FLU_L_STATUS_INPROGRESS: return UCS_INPROGRESS;
    case FLU_L_STATUS_NO_RESOURCE: return UCS_ERR_NO_RESOURCE;
    case FLU_L_STATUS_BUSY: return UCS_ERR_BUSY;
    case FLU_L_STATUS_UNSUPPORTED: return UCS_ERR_UNSUPPORTED;
    case FLU_L_STATUS_EXCEEDS_LIMIT: return UCS_ERR_EXCEEDS_LIMIT;
    case FLU_L_STATUS_NO_DEVICE: return UCS_ERR_NO_DEVICE;
    case FLU_L_ATTR_COUNT: return FLU_ATTR_COUNT;
    case FLU_L_ST_SIZE: return sizeof(flu_status_t);
    case FLU_L_ST_EVENTS: return offsetof(flu_status_t, events);
    case FLU_L_ST_LENGTH: return offsetof(flu_status_t, length);
    case FLU_L_ST_DROPPED: return offsetof(flu_status_t, dropped);
    default: return -1;
    }
}

int flu_header_version(void) {
    return (UCT_VERNO_MAJOR << 16) | (UCT_VERNO_MINOR << 8) | UCT_VERNO_PATCH;
}

const char *flu_status_string(int status) {
    return ucs_status_string((ucs_status_t)status);
}

/*
 * The last failure, per thread: the memory-domain calls (allocation, registration, packing) run on
 * callers' threads while the worker's own fails calls of its own, and each reads the failure of its
 * own call right after it.
 */
static __thread int last_status;
static __thread char last_error[1200];

static int fail(flu_worker_t *w, ucs_status_t status, const char *fmt, const char *a, const char *b) {
    (void)w;
    last_status = status;
    snprintf(last_error, sizeof(last_error), fmt, a, b);
    return status;
}

int flu_last_status(flu_worker_t *w) {
    (void)w;
    return last_status;
}

const char *flu_last_error(flu_worker_t *w) {
    (void)w;
    return last_error;
}

/* ---- resources ---- */

static const char *device_type(uct_device_type_t t) {
    switch (t) {
    case UCT_DEVICE_TYPE_NET: return "net";
    case UCT_DEVICE_TYPE_SHM: return "shm";
    case UCT_DEVICE_TYPE_ACC: return "acc";
    case UCT_DEVICE_TYPE_SELF: return "self";
    default: return "other";
    }
}

static int component_name(uct_component_h c, char *name, unsigned *mds) {
    uct_component_attr_t attr;
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(c, &attr) != UCS_OK) {
        return -1;
    }
    memcpy(name, attr.name, UCT_COMPONENT_NAME_MAX);
    if (mds != NULL) {
        *mds = attr.md_resource_count;
    }
    return 0;
}

static ucs_status_t open_md(uct_component_h c, const char *md_name, uct_md_h *md) {
    uct_md_config_t *config;
    ucs_status_t s = uct_md_config_read(c, NULL, NULL, &config);
    if (s != UCS_OK) {
        return s;
    }
    s = uct_md_open(c, md_name, config, md);
    uct_config_release(config);
    return s;
}

long flu_list_resources(char *buf, long cap) {
    uct_component_h *components;
    unsigned n;
    long used = 0;
    if (uct_query_components(&components, &n) != UCS_OK) {
        return UCS_ERR_NO_DEVICE;
    }
    for (unsigned i = 0; i < n; i++) {
        char cname[UCT_COMPONENT_NAME_MAX];
        unsigned mds;
        if (component_name(components[i], cname, &mds) != 0 || mds == 0) {
            continue;
        }
        uct_md_resource_desc_t *md_res = calloc(mds, sizeof(*md_res));
        uct_component_attr_t attr;
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = md_res;
        if (md_res == NULL || uct_component_query(components[i], &attr) != UCS_OK) {
            free(md_res);
            continue;
        }
        for (unsigned m = 0; m < mds; m++) {
            uct_md_h md;
            uct_tl_resource_desc_t *tls;
            unsigned num_tls;
            if (open_md(components[i], md_res[m].md_name, &md) != UCS_OK) {
                continue;
            }
            if (uct_md_query_tl_resources(md, &tls, &num_tls) == UCS_OK) {
                for (unsigned t = 0; t < num_tls; t++) {
                    char line[512];
                    int len = snprintf(line, sizeof(line), "%s\t%s\t%s\t%s\t%s\n", cname, md_res[m].md_name,
                                       tls[t].tl_name, tls[t].dev_name, device_type(tls[t].dev_type));
                    if (len > 0 && used + len <= cap) {
                        memcpy(buf + used, line, len);
                    }
                    used += len > 0 ? len : 0;
                }
                uct_release_tl_resource_list(tls);
            }
            uct_md_close(md);
        }
        free(md_res);
    }
    uct_release_component_list(components);
    return used;
}

/* ---- worker and events ---- */

flu_worker_t *flu_worker_create(void) {
    flu_worker_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return NULL;
    }
    if (ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &w->async) != UCS_OK) {
        free(w);
        return NULL;
    }
    /* Serialized: one thread at a time, the agent's own or a thread it is lent to (progressHere). */
    if (uct_worker_create(w->async, UCS_THREAD_MODE_SERIALIZED, &w->worker) != UCS_OK) {
        ucs_async_context_destroy(w->async);
        free(w);
        return NULL;
    }
    if (uct_query_components(&w->components, &w->num_components) != UCS_OK) {
        uct_worker_destroy(w->worker);
        ucs_async_context_destroy(w->async);
        free(w);
        return NULL;
    }
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0) {
        uct_release_component_list(w->components);
        uct_worker_destroy(w->worker);
        ucs_async_context_destroy(w->async);
        free(w);
        return NULL;
    }
    w->events_cap = 64 * 1024;
    w->st.events = (uint64_t)(uintptr_t)malloc(w->events_cap);
    if (EVENTS(w) == NULL) {
        flu_worker_destroy(w);
        return NULL;
    }
    return w;
}

static void free_retired(flu_worker_t *w);

void flu_worker_destroy(flu_worker_t *w) {
    while (w->ifaces != NULL) {
        flu_iface_close(w->ifaces);
    }
    while (w->free_comps != NULL) {
        flu_comp_t *c = w->free_comps;
        w->free_comps = c->next;
        free(c);
    }
    while (w->free_pends != NULL) {
        flu_pend_t *p = w->free_pends;
        w->free_pends = p->next;
        free(p);
    }
    if (w->components != NULL) {
        uct_release_component_list(w->components);
    }
    uct_worker_destroy(w->worker);
    ucs_async_context_destroy(w->async);
    close(w->wake_fd);
    free_retired(w);
    free(EVENTS(w));
    free(w);
}

int flu_worker_can_wait(flu_worker_t *w) {
    if (w->ifaces == NULL) {
        return 0;
    }
    for (flu_iface_t *i = w->ifaces; i != NULL; i = i->next) {
        if (!(i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD)) {
            return 0;
        }
    }
    return 1;
}

static unsigned armable(const flu_iface_t *i) {
    unsigned e = 0;
    if (i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_SEND_COMP) {
        e |= UCT_EVENT_SEND_COMP;
    }
    if (i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_RECV) {
        e |= UCT_EVENT_RECV;
    }
    if (i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_RECV_SIG) {
        e |= UCT_EVENT_RECV_SIG;
    }
    return e;
}

int flu_worker_wait(flu_worker_t *w, long timeout_ns) {
    struct pollfd fds[64];
    nfds_t n = 0;
    fds[n].fd = w->wake_fd;
    fds[n].events = POLLIN;
    n++;
    for (flu_iface_t *i = w->ifaces; i != NULL; i = i->next) {
        int fd;
        if (n == sizeof(fds) / sizeof(fds[0])) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        if (!(i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD)) {
            return UCS_ERR_UNSUPPORTED;
        }
        ucs_status_t s = uct_iface_event_fd_get(i->iface, &fd);
        if (s != UCS_OK) {
            return s;
        }
        s = uct_iface_event_arm(i->iface, armable(i));
        if (s == UCS_ERR_BUSY) {
            return 0; /* events are pending: progress them instead */
        }
        if (s != UCS_OK) {
            return s;
        }
        fds[n].fd = fd;
        fds[n].events = POLLIN;
        n++;
    }
    struct timespec t = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
    int r = ppoll(fds, n, &t, NULL);
    if (r < 0 && errno != EINTR) {
        return UCS_ERR_IO_ERROR;
    }
    if (r > 0 && (fds[0].revents & POLLIN)) {
        uint64_t count;
        ssize_t got = read(w->wake_fd, &count, sizeof(count)); /* a wake is one event however many came */
        (void)got;
    }
    return 1;
}

void flu_worker_wake(flu_worker_t *w) {
    uint64_t one = 1;
    ssize_t put = write(w->wake_fd, &one, sizeof(one)); /* EAGAIN only when the counter is full: awake anyway */
    (void)put;
}

/* Room for one record with payload bytes, or NULL (counted as dropped) if memory ran out. */
static flu_event_t *event(flu_worker_t *w, uint8_t type, size_t payload) {
    size_t need = sizeof(flu_event_t) + ((payload + 7) & ~(size_t)7);
    if (w->st.length + need > w->events_cap) {
        size_t cap = w->events_cap * 2;
        while (cap < w->st.length + need) {
            cap *= 2;
        }
        uint8_t *grown = w->num_retired < (int)(sizeof(w->retired) / sizeof(w->retired[0])) ? malloc(cap) : NULL;
        if (grown == NULL) {
            w->st.dropped++;
            return NULL;
        }
        memcpy(grown, EVENTS(w), w->st.length);
        w->retired[w->num_retired++] = EVENTS(w);
        w->st.events = (uint64_t)(uintptr_t)grown;
        w->events_cap = cap;
    }
    flu_event_t *e = (flu_event_t *)(EVENTS(w) + w->st.length);
    w->st.length += need;
    memset(e, 0, sizeof(*e));
    e->type = type;
    e->length = (uint32_t)payload;
    return e;
}

flu_status_t *flu_worker_status(flu_worker_t *w) {
    return &w->st;
}

static void free_retired(flu_worker_t *w) {
    while (w->num_retired > 0) {
        free(w->retired[--w->num_retired]);
    }
}

long flu_progress(flu_worker_t *w) {
    long n = 0;
    free_retired(w); /* no drain runs now: nothing reads them */
    for (flu_iface_t *i = w->ifaces; i != NULL; i = i->next) {
        n += uct_iface_progress(i->iface);
    }
    return n;
}

static void completed(uct_completion_t *self) {
    flu_comp_t *c = (flu_comp_t *)self;
    flu_worker_t *w = c->w;
    flu_event_t *e = event(w, FLU_EV_COMPLETION, 0);
    if (e != NULL) {
        e->status = self->status;
        e->token = c->token;
        e->value = c->width == 4 ? c->result.r32 : c->result.r64;
    }
    c->next = w->free_comps;
    w->free_comps = c;
}

static flu_comp_t *completion(flu_worker_t *w, uint64_t token, uint32_t width) {
    flu_comp_t *c = w->free_comps;
    if (c != NULL) {
        w->free_comps = c->next;
    } else {
        c = malloc(sizeof(*c));
        if (c == NULL) {
            return NULL;
        }
    }
    c->comp.func = completed;
    c->comp.count = 1;
    c->comp.status = UCS_OK;
    c->w = w;
    c->token = token;
    c->result.r64 = 0;
    c->width = width;
    return c;
}

static void release(flu_worker_t *w, flu_comp_t *c) {
    c->next = w->free_comps;
    w->free_comps = c;
}

static ucs_status_t ready(uct_pending_req_t *self) {
    flu_pend_t *p = (flu_pend_t *)self;
    flu_worker_t *w = p->w;
    flu_event_t *e = event(w, FLU_EV_READY, 0);
    if (e != NULL) {
        e->token = p->token;
    }
    p->next = w->free_pends;
    w->free_pends = p;
    return UCS_OK;
}

static void purged(uct_pending_req_t *self, void *arg) {
    (void)arg;
    flu_pend_t *p = (flu_pend_t *)self;
    p->next = p->w->free_pends;
    p->w->free_pends = p;
}

static ucs_status_t am_received(void *arg, void *data, size_t length, unsigned flags) {
    (void)flags; /* the data is copied out, so UCT keeps no descriptor */
    flu_am_arg_t *a = arg;
    flu_event_t *e = event(a->iface->w, FLU_EV_AM, length);
    if (e != NULL) {
        e->am_id = a->id;
        e->token = (uint64_t)(uintptr_t)a->iface;
        memcpy(e + 1, data, length);
    }
    return UCS_OK;
}

static ucs_status_t peer_failed(void *arg, uct_ep_h ep, ucs_status_t status) {
    flu_iface_t *i = arg;
    for (flu_ep_t *e = i->eps; e != NULL; e = e->next) {
        if (e->ep == ep) {
            flu_event_t *ev = event(i->w, FLU_EV_EP_ERROR, 0);
            if (ev != NULL) {
                ev->status = status;
                ev->token = (uint64_t)(uintptr_t)e;
            }
            break;
        }
    }
    return UCS_OK;
}

/* ---- ifaces ---- */

static uct_component_h find_component(flu_worker_t *w, const char *name) {
    for (unsigned i = 0; i < w->num_components; i++) {
        char cname[UCT_COMPONENT_NAME_MAX];
        if (component_name(w->components[i], cname, NULL) == 0 && strcmp(cname, name) == 0) {
            return w->components[i];
        }
    }
    return NULL;
}

/* Applies "KEY=VALUE\n" lines to an iface config. */
static ucs_status_t configure(flu_worker_t *w, void *config, const char *lines) {
    char line[512];
    while (lines != NULL && *lines != '\0') {
        const char *end = strchr(lines, '\n');
        size_t len = end != NULL ? (size_t)(end - lines) : strlen(lines);
        if (len >= sizeof(line)) { /* a setting longer than this is not one UCT has */
            return fail(w, UCS_ERR_INVALID_PARAM, "a UCT setting is too long: %.40s%s", lines, "...");
        }
        memcpy(line, lines, len);
        line[len] = '\0';
        lines = end != NULL ? end + 1 : NULL;
        if (len == 0) {
            continue;
        }
        char *eq = strchr(line, '=');
        if (eq == NULL) {
            return fail(w, UCS_ERR_INVALID_PARAM, "a UCT setting is not KEY=VALUE: %s%s", line, "");
        }
        *eq = '\0';
        ucs_status_t s = uct_config_modify(config, line, eq + 1);
        if (s != UCS_OK) {
            return fail(w, s, "UCT refused the setting %s=%s", line, eq + 1);
        }
    }
    return UCS_OK;
}

static unsigned mem_flags(int access) {
    unsigned f = UCT_MD_MEM_ACCESS_LOCAL_READ | UCT_MD_MEM_ACCESS_LOCAL_WRITE;
    if (access & FLU_ACCESS_READ) {
        f |= UCT_MD_MEM_ACCESS_REMOTE_GET;
    }
    if (access & FLU_ACCESS_WRITE) {
        f |= UCT_MD_MEM_ACCESS_REMOTE_PUT;
    }
    if (access & FLU_ACCESS_ATOMIC) {
        f |= UCT_MD_MEM_ACCESS_REMOTE_ATOMIC;
    }
    return f;
}

static uint64_t amo_mask(uint64_t uct_flags);
static void probe_atomics(flu_iface_t *i);

/* Whether this worker's own posix iface names its FIFO's segment through /proc, as a peer's must. */
static int own_posix_address_named_by_proc(flu_iface_t *i) {
    uint8_t own[FLU_MAX_ADDRESS] = {0};
    size_t il = i->attr.iface_addr_len;
    return il >= 8 && il <= FLU_MAX_ADDRESS && uct_iface_get_address(i->iface, (uct_iface_addr_t *)own) == UCS_OK
            && posix_named_by_proc(own);
}

flu_iface_t *flu_iface_open(flu_worker_t *w, const char *spec, const char *config) {
    char buf[512];
    char *part[4];
    if (strlen(spec) >= sizeof(buf)) {
        fail(w, UCS_ERR_INVALID_PARAM, "resource name too long: %.40s%s", spec, "...");
        return NULL;
    }
    strcpy(buf, spec);
    char *p = buf;
    for (int k = 0; k < 4; k++) {
        part[k] = p;
        char *tab = strchr(p, '\t');
        if ((tab == NULL) != (k == 3)) {
            fail(w, UCS_ERR_INVALID_PARAM, "resource not component, md, transport and device: %s%s", spec, "");
            return NULL;
        }
        if (tab != NULL) {
            *tab = '\0';
            p = tab + 1;
        }
    }
    uct_component_h component = find_component(w, part[0]);
    if (component == NULL) {
        fail(w, UCS_ERR_NO_DEVICE, "no UCT component %s%s", part[0], "");
        return NULL;
    }
    flu_iface_t *i = calloc(1, sizeof(*i));
    if (i == NULL) {
        fail(w, UCS_ERR_NO_MEMORY, "out of memory opening %s/%s", part[2], part[3]);
        return NULL;
    }
    i->w = w;
    i->component = component;
    ucs_status_t s = open_md(component, part[1], &i->md);
    if (s != UCS_OK) {
        fail(w, s, "cannot open memory domain %s of %s", part[1], part[0]);
        free(i);
        return NULL;
    }
    if ((s = uct_md_query(i->md, &i->md_attr)) != UCS_OK) {
        fail(w, s, "cannot query memory domain %s%s", part[1], "");
        uct_md_close(i->md);
        free(i);
        return NULL;
    }
    uct_iface_config_t *iface_config;
    if ((s = uct_md_iface_config_read(i->md, part[2], NULL, NULL, &iface_config)) != UCS_OK) {
        fail(w, s, "no configuration for transport %s on %s", part[2], part[1]);
        uct_md_close(i->md);
        free(i);
        return NULL;
    }
    if ((s = configure(w, iface_config, config)) != UCS_OK) {
        uct_config_release(iface_config);
        uct_md_close(i->md);
        free(i);
        return NULL;
    }
    uct_iface_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE
            | UCT_IFACE_PARAM_FIELD_STATS_ROOT | UCT_IFACE_PARAM_FIELD_RX_HEADROOM
            | UCT_IFACE_PARAM_FIELD_CPU_MASK | UCT_IFACE_PARAM_FIELD_ERR_HANDLER
            | UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG | UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = part[2];
    params.mode.device.dev_name = part[3];
    params.stats_root = NULL;
    params.rx_headroom = 0;
    UCS_CPU_ZERO(&params.cpu_mask);
    params.err_handler = peer_failed;
    params.err_handler_arg = i;
    params.err_handler_flags = 0; /* called from progress, on the worker's thread */
    s = uct_iface_open(i->md, w->worker, &params, iface_config, &i->iface);
    uct_config_release(iface_config);
    if (s != UCS_OK) {
        fail(w, s, "cannot open UCT transport %s on device %s", part[2], part[3]);
        uct_md_close(i->md);
        free(i);
        return NULL;
    }
    if ((s = uct_iface_query(i->iface, &i->attr)) != UCS_OK) {
        fail(w, s, "cannot query UCT transport %s on device %s", part[2], part[3]);
        uct_iface_close(i->iface);
        uct_md_close(i->md);
        free(i);
        return NULL;
    }
    i->posix = strcmp(part[2], "posix") == 0;
    if (i->posix && !own_posix_address_named_by_proc(i)) {
        fail(w, UCS_ERR_UNSUPPORTED, "posix on %s names its segments otherwise than by a descriptor through /proc"
             " (UCX's USE_PROC_LINK = n?); a peer's segment named by a path or under /dev/shm may be any file,"
             " made by any user, so only names through /proc are taken%s", part[3], "");
        uct_iface_close(i->iface);
        uct_md_close(i->md);
        free(i);
        return NULL;
    }
    if (i->attr.cap.flags & (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_AM_ZCOPY)) {
        for (unsigned id = 0; id < UCT_AM_ID_MAX; id++) {
            i->am_args[id].iface = i;
            i->am_args[id].id = (uint8_t)id;
            s = uct_iface_set_am_handler(i->iface, (uint8_t)id, am_received, &i->am_args[id], 0);
            if (s != UCS_OK) {
                fail(w, s, "cannot set the active-message handlers of %s on %s", part[2], part[3]);
                uct_iface_close(i->iface);
                uct_md_close(i->md);
                free(i);
                return NULL;
            }
        }
    }
    uct_iface_progress_enable(i->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    i->next = w->ifaces;
    w->ifaces = i;
    i->amo[0] = amo_mask(i->attr.cap.atomic32.op_flags);
    i->amo[1] = amo_mask(i->attr.cap.atomic32.fop_flags);
    i->amo[2] = amo_mask(i->attr.cap.atomic64.op_flags);
    i->amo[3] = amo_mask(i->attr.cap.atomic64.fop_flags);
    probe_atomics(i);
    return i;
}

void flu_iface_close(flu_iface_t *i) {
    flu_worker_t *w = i->w;
    while (i->eps != NULL) {
        flu_ep_destroy(i->eps);
    }
    for (flu_iface_t **p = &w->ifaces; *p != NULL; p = &(*p)->next) {
        if (*p == i) {
            *p = i->next;
            break;
        }
    }
    uct_iface_close(i->iface);
    if (i->probe_rkey != NULL) { /* nothing writes the word once the iface is closed */
        flu_rkey_release(i->probe_rkey);
    }
    if (i->probe_mem != NULL) {
        flu_mem_free(i->probe_mem);
    }
    free(i->probe_scratch);
    uct_md_close(i->md);
    free(i);
}

static uint64_t amo_mask(uint64_t uct_flags) {
    static const int ops[] = {UCT_ATOMIC_OP_ADD, UCT_ATOMIC_OP_AND, UCT_ATOMIC_OP_OR, UCT_ATOMIC_OP_XOR,
                              UCT_ATOMIC_OP_SWAP, UCT_ATOMIC_OP_CSWAP};
    uint64_t m = 0;
    for (int k = 0; k < 6; k++) {
        if (uct_flags & UCS_BIT(ops[k])) {
            m |= 1u << k;
        }
    }
    return m;
}

static long caps(flu_iface_t *i) {
    static const struct {
        uint64_t uct;
        long flu;
    } map[] = {
        {UCT_IFACE_FLAG_PUT_SHORT, FLU_CAP_PUT_SHORT}, {UCT_IFACE_FLAG_PUT_BCOPY, FLU_CAP_PUT_BCOPY},
        {UCT_IFACE_FLAG_PUT_ZCOPY, FLU_CAP_PUT_ZCOPY}, {UCT_IFACE_FLAG_GET_SHORT, FLU_CAP_GET_SHORT},
        {UCT_IFACE_FLAG_GET_BCOPY, FLU_CAP_GET_BCOPY}, {UCT_IFACE_FLAG_GET_ZCOPY, FLU_CAP_GET_ZCOPY},
        {UCT_IFACE_FLAG_AM_SHORT, FLU_CAP_AM_SHORT}, {UCT_IFACE_FLAG_AM_BCOPY, FLU_CAP_AM_BCOPY},
        {UCT_IFACE_FLAG_AM_ZCOPY, FLU_CAP_AM_ZCOPY}, {UCT_IFACE_FLAG_PENDING, FLU_CAP_PENDING},
        {UCT_IFACE_FLAG_CONNECT_TO_IFACE, FLU_CAP_CONNECT_TO_IFACE},
        {UCT_IFACE_FLAG_CONNECT_TO_EP, FLU_CAP_CONNECT_TO_EP},
        {UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE, FLU_CAP_PEER_FAILURE},
        {UCT_IFACE_FLAG_ATOMIC_CPU, FLU_CAP_ATOMIC_CPU}, {UCT_IFACE_FLAG_ATOMIC_DEVICE, FLU_CAP_ATOMIC_DEVICE},
        {UCT_IFACE_FLAG_AM_DUP, FLU_CAP_AM_DUP},
    };
    long c = 0;
    for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++) {
        if (i->attr.cap.flags & map[k].uct) {
            c |= map[k].flu;
        }
    }
    if (i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) {
        c |= FLU_CAP_EVENT_FD;
    }
    uint64_t md = i->md_attr.cap.flags;
    c |= (md & UCT_MD_FLAG_ALLOC ? FLU_CAP_MD_ALLOC : 0) | (md & UCT_MD_FLAG_REG ? FLU_CAP_MD_REG : 0)
            | (md & UCT_MD_FLAG_NEED_MEMH ? FLU_CAP_MD_NEED_MEMH : 0)
            | (md & UCT_MD_FLAG_NEED_RKEY ? FLU_CAP_MD_NEED_RKEY : 0)
            | (md & UCT_MD_FLAG_RKEY_PTR ? FLU_CAP_MD_RKEY_PTR : 0);
    return c;
}

static long clamp(uint64_t v) {
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (long)v;
}

long flu_iface_attr(flu_iface_t *i, int index) {
    const uct_iface_attr_t *a = &i->attr;
    switch (index) {
    case FLU_ATTR_CAPS: return caps(i);
    case FLU_ATTR_PUT_MAX_SHORT: return clamp(a->cap.put.max_short);
    case FLU_ATTR_PUT_MAX_BCOPY: return clamp(a->cap.put.max_bcopy);
    case FLU_ATTR_PUT_MIN_ZCOPY: return clamp(a->cap.put.min_zcopy);
    case FLU_ATTR_PUT_MAX_ZCOPY: return clamp(a->cap.put.max_zcopy);
    case FLU_ATTR_GET_MAX_SHORT: return clamp(a->cap.get.max_short);
    case FLU_ATTR_GET_MAX_BCOPY: return clamp(a->cap.get.max_bcopy);
    case FLU_ATTR_GET_MIN_ZCOPY: return clamp(a->cap.get.min_zcopy);
    case FLU_ATTR_GET_MAX_ZCOPY: return clamp(a->cap.get.max_zcopy);
    case FLU_ATTR_AM_MAX_SHORT: return clamp(a->cap.am.max_short);
    case FLU_ATTR_AM_MAX_BCOPY: return clamp(a->cap.am.max_bcopy);
    case FLU_ATTR_AM_MAX_ZCOPY: return clamp(a->cap.am.max_zcopy);
    case FLU_ATTR_AM_MAX_HDR: return clamp(a->cap.am.max_hdr);
    case FLU_ATTR_ATOMIC32_POST: return (long)i->amo[0];
    case FLU_ATTR_ATOMIC32_FETCH: return (long)i->amo[1];
    case FLU_ATTR_ATOMIC64_POST: return (long)i->amo[2];
    case FLU_ATTR_ATOMIC64_FETCH: return (long)i->amo[3];
    case FLU_ATTR_DEVICE_ADDR_LEN: return clamp(a->device_addr_len);
    case FLU_ATTR_IFACE_ADDR_LEN: return clamp(a->iface_addr_len);
    case FLU_ATTR_EP_ADDR_LEN: return clamp(a->ep_addr_len);
    case FLU_ATTR_RKEY_PACKED_SIZE: return clamp(i->md_attr.rkey_packed_size);
    case FLU_ATTR_MAX_ALLOC: return clamp(i->md_attr.cap.max_alloc);
    case FLU_ATTR_MAX_REG: return clamp(i->md_attr.cap.max_reg);
    case FLU_ATTR_MAX_EPS: return clamp(a->max_num_eps);
    case FLU_ATTR_LATENCY_NS: return (long)(a->latency.c * 1e9);
    case FLU_ATTR_BANDWIDTH_MBS: return (long)((a->bandwidth.dedicated + a->bandwidth.shared) / 1e6);
    case FLU_ATTR_ATOMIC_REFUTED: return (long)i->refuted;
    case FLU_ATTR_ATOMIC_VERIFIED: return i->verified;
    default: return -1;
    }
}

long flu_iface_address(flu_iface_t *i, uint8_t *buf, long cap) {
    size_t dl = i->attr.device_addr_len;
    size_t il = i->attr.iface_addr_len;
    if (dl > FLU_MAX_ADDRESS || il > FLU_MAX_ADDRESS || (long)(4 + dl + il) > cap) {
        return UCS_ERR_BUFFER_TOO_SMALL;
    }
    buf[0] = (uint8_t)dl;
    buf[1] = (uint8_t)(dl >> 8);
    buf[2] = (uint8_t)il;
    buf[3] = (uint8_t)(il >> 8);
    ucs_status_t s = uct_iface_get_device_address(i->iface, (uct_device_addr_t *)(buf + 4));
    if (s == UCS_OK && il > 0) {
        s = uct_iface_get_address(i->iface, (uct_iface_addr_t *)(buf + 4 + dl));
    }
    return s == UCS_OK ? (long)(4 + dl + il) : s;
}

/*
 * Splits a peer's framed UCT address, 0 if its framing holds. Both parts are copied into buffers of
 * the caller's (FLU_MAX_ADDRESS + FLU_PEER_PADDING bytes each, zeroed): the device address's length
 * may differ from the iface's own (tcp's holds an IPv4 or an IPv6 address), and UCT reads as many
 * bytes as the peer's own bytes claim, or a string, which must stay in memory of ours, not run past
 * what the peer sent. A posix address must name its FIFO's segment through /proc.
 */
static int split_address(flu_iface_t *i, const uint8_t *addr, long len, uint8_t *dev_copy, uint8_t *iface_copy,
                         const uint8_t **dev, const uint8_t **iface) {
    if (len < 4 || i->attr.device_addr_len > FLU_MAX_ADDRESS || i->attr.iface_addr_len > FLU_MAX_ADDRESS) {
        return -1;
    }
    size_t dl = addr[0] | (size_t)addr[1] << 8;
    size_t il = addr[2] | (size_t)addr[3] << 8;
    if (dl != i->attr.device_addr_len && (dl == 0 || i->attr.device_addr_len == 0)) {
        return -1; /* a device address where this transport has none, or none where it has one */
    }
    if (dl > FLU_MAX_ADDRESS || il != i->attr.iface_addr_len || (long)(4 + dl + il) != len) {
        return -1;
    }
    if (i->posix && (il < 8 || !posix_named_by_proc(addr + 4 + dl))) {
        return -1;
    }
    memcpy(dev_copy, addr + 4, dl);
    memcpy(iface_copy, addr + 4 + dl, il);
    *dev = dev_copy;
    *iface = iface_copy;
    return 0;
}

int flu_iface_reachable(flu_iface_t *i, const uint8_t *addr, long len) {
    uint8_t dev_copy[FLU_MAX_ADDRESS + FLU_PEER_PADDING] = {0};
    uint8_t iface_copy[FLU_MAX_ADDRESS + FLU_PEER_PADDING] = {0};
    const uint8_t *dev;
    const uint8_t *iface;
    if (split_address(i, addr, len, dev_copy, iface_copy, &dev, &iface) != 0) {
        return 0;
    }
    return uct_iface_is_reachable(i->iface, (const uct_device_addr_t *)dev, (const uct_iface_addr_t *)iface);
}

long flu_iface_event_fd(flu_iface_t *i) {
    int fd;
    if (!(i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD)) {
        return UCS_ERR_UNSUPPORTED; /* some ifaces (self) have no such operation at all */
    }
    ucs_status_t s = uct_iface_event_fd_get(i->iface, &fd);
    return s == UCS_OK ? fd : s;
}

int flu_iface_event_arm(flu_iface_t *i) {
    if (!(i->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD)) {
        return UCS_ERR_UNSUPPORTED;
    }
    return uct_iface_event_arm(i->iface, UCT_EVENT_SEND_COMP | UCT_EVENT_RECV);
}

/* ---- endpoints and operations ---- */

static flu_ep_t *adopt(flu_iface_t *i, flu_ep_t *e);

flu_ep_t *flu_ep_create(flu_iface_t *i, const uint8_t *addr, long len) {
    uint8_t dev_copy[FLU_MAX_ADDRESS + FLU_PEER_PADDING] = {0};
    uint8_t iface_copy[FLU_MAX_ADDRESS + FLU_PEER_PADDING] = {0};
    const uint8_t *dev;
    const uint8_t *iface;
    if (!(i->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE)) {
        fail(i->w, UCS_ERR_UNSUPPORTED, "transport cannot connect to an interface%s%s", "", "");
        return NULL;
    }
    if (split_address(i, addr, len, dev_copy, iface_copy, &dev, &iface) != 0) {
        fail(i->w, UCS_ERR_INVALID_ADDR, "malformed UCT address (%s%s)", "framing", "");
        return NULL;
    }
    flu_ep_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        fail(i->w, UCS_ERR_NO_MEMORY, "out of memory%s%s", "", "");
        return NULL;
    }
    uct_ep_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface = i->iface;
    params.dev_addr = (const uct_device_addr_t *)dev;
    params.iface_addr = (const uct_iface_addr_t *)iface;
    ucs_status_t s = uct_ep_create(&params, &e->ep);
    if (s != UCS_OK) {
        fail(i->w, s, "cannot create a UCT endpoint%s%s", "", "");
        free(e);
        return NULL;
    }
    return adopt(i, e);
}

/* Links a new endpoint into its iface, after checking the headers' layout against the library's. */
static flu_ep_t *adopt(flu_iface_t *i, flu_ep_t *e) {
    if (e->ep->iface != i->iface) { /* the layout this file was compiled against is not the library's */
        uct_ep_destroy(e->ep);
        fail(i->w, UCS_ERR_UNSUPPORTED, "UCT endpoint layout does not match the headers%s%s", "", "");
        free(e);
        return NULL;
    }
    e->iface = i;
    e->next = i->eps;
    i->eps = e;
    return e;
}

flu_ep_t *flu_ep_create_unconnected(flu_iface_t *i) {
    if (!(i->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP)) {
        fail(i->w, UCS_ERR_UNSUPPORTED, "transport cannot connect to an endpoint%s%s", "", "");
        return NULL;
    }
    flu_ep_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        fail(i->w, UCS_ERR_NO_MEMORY, "out of memory%s%s", "", "");
        return NULL;
    }
    uct_ep_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface = i->iface;
    ucs_status_t s = uct_ep_create(&params, &e->ep);
    if (s != UCS_OK) {
        fail(i->w, s, "cannot create a UCT endpoint to connect to a peer's endpoint%s%s", "", "");
        free(e);
        return NULL;
    }
    return adopt(i, e);
}

long flu_ep_address(flu_ep_t *e, uint8_t *buf, long cap) {
    size_t n = e->iface->attr.ep_addr_len;
    if (n == 0 || n > FLU_MAX_ADDRESS || (long)n > cap) {
        return UCS_ERR_BUFFER_TOO_SMALL;
    }
    ucs_status_t s = uct_ep_get_address(e->ep, (uct_ep_addr_t *)buf);
    return s == UCS_OK ? (long)n : s;
}

int flu_ep_connect(flu_ep_t *e, const uint8_t *iface_addr, long iface_len, const uint8_t *ep_addr, long ep_len) {
    uint8_t dev_copy[FLU_MAX_ADDRESS + FLU_PEER_PADDING] = {0};
    uint8_t iface_copy[FLU_MAX_ADDRESS + FLU_PEER_PADDING] = {0};
    const uint8_t *dev;
    const uint8_t *iface;
    flu_iface_t *i = e->iface;
    if (split_address(i, iface_addr, iface_len, dev_copy, iface_copy, &dev, &iface) != 0 || ep_len != (long)i->attr.ep_addr_len) {
        return fail(i->w, UCS_ERR_INVALID_ADDR, "malformed UCT address (%s%s)", "endpoint framing", "");
    }
    ucs_status_t s = uct_ep_connect_to_ep(e->ep, (const uct_device_addr_t *)dev, (const uct_ep_addr_t *)ep_addr);
    return s == UCS_OK ? UCS_OK : fail(i->w, s, "cannot connect the UCT endpoint to the peer's%s%s", "", "");
}

void flu_ep_destroy(flu_ep_t *e) {
    flu_iface_t *i = e->iface;
    uct_ep_pending_purge(e->ep, purged, NULL);
    uct_ep_destroy(e->ep);
    for (flu_ep_t **p = &i->eps; *p != NULL; p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            break;
        }
    }
    free(e);
}

typedef struct copy_arg {
    const void *src;
    size_t length;
} copy_arg_t;

static size_t pack(void *dest, void *arg) {
    copy_arg_t *a = arg;
    memcpy(dest, a->src, a->length);
    return a->length;
}

/* Two pieces, one message: a request's header and its payload, each copied once, from where it is. */
typedef struct gather_arg {
    const void *first;
    size_t first_length;
    const void *second;
    size_t second_length;
} gather_arg_t;

static size_t pack_gather(void *dest, void *arg) {
    gather_arg_t *a = arg;
    memcpy(dest, a->first, a->first_length);
    memcpy((uint8_t *)dest + a->first_length, a->second, a->second_length);
    return a->first_length + a->second_length;
}

static void unpack(void *arg, const void *data, size_t length) {
    memcpy(arg, data, length);
}

static int uct_amo(uint32_t op) {
    static const int ops[] = {UCT_ATOMIC_OP_ADD, UCT_ATOMIC_OP_AND, UCT_ATOMIC_OP_OR, UCT_ATOMIC_OP_XOR,
                              UCT_ATOMIC_OP_SWAP, UCT_ATOMIC_OP_CSWAP};
    return op < 6 ? ops[op] : -1;
}

/* Runs an operation that takes a completion; the completion goes back to the pool unless UCT kept it. */
#define WITH_COMPLETION(w, op, width, call)                                                         \
    do {                                                                                            \
        flu_comp_t *c = completion(w, (op)->token, width);                                          \
        if (c == NULL) {                                                                            \
            return UCS_ERR_NO_MEMORY;                                                               \
        }                                                                                           \
        ucs_status_t s = (call);                                                                    \
        if (s != UCS_INPROGRESS) {                                                                  \
            if (s == UCS_OK) {                                                                      \
                (op)->result = (width) == 4 ? c->result.r32 : c->result.r64;                        \
            }                                                                                       \
            release(w, c);                                                                          \
        }                                                                                           \
        return s;                                                                                   \
    } while (0)

/*
 * UCT checks its arguments with assertions only in debug builds; a release build would act on a
 * length past its limit or abort on an operation the iface lacks. Refuse those here instead.
 */
static int refuse(const flu_iface_t *i, const flu_op_t *op) {
    const uct_iface_attr_t *a = &i->attr;
    uint64_t f = a->cap.flags;
    int kind = op->width == 4 ? 0 : op->width == 8 ? 2 : -1;
    switch (op->kind) {
    case FLU_PUT_SHORT:
        return !(f & UCT_IFACE_FLAG_PUT_SHORT) ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.put.max_short ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_PUT_BCOPY:
        return !(f & UCT_IFACE_FLAG_PUT_BCOPY) ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.put.max_bcopy ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_PUT_ZCOPY:
        return !(f & UCT_IFACE_FLAG_PUT_ZCOPY) ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.put.max_zcopy || op->length < a->cap.put.min_zcopy ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_GET_SHORT:
        return !(f & UCT_IFACE_FLAG_GET_SHORT) ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.get.max_short ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_GET_BCOPY:
        return !(f & UCT_IFACE_FLAG_GET_BCOPY) ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.get.max_bcopy ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_GET_ZCOPY:
        return !(f & UCT_IFACE_FLAG_GET_ZCOPY) ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.get.max_zcopy || op->length < a->cap.get.min_zcopy ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_ATOMIC_POST:
        return kind < 0 || op->atomic_op > FLU_AMO_SWAP || !(i->amo[kind] & (1u << op->atomic_op))
                ? UCS_ERR_UNSUPPORTED : 0;
    case FLU_ATOMIC_FETCH:
        return kind < 0 || op->atomic_op > FLU_AMO_SWAP || !(i->amo[kind + 1] & (1u << op->atomic_op))
                ? UCS_ERR_UNSUPPORTED : 0;
    case FLU_CSWAP:
        return kind < 0 || !(i->amo[kind + 1] & (1u << FLU_AMO_CSWAP)) ? UCS_ERR_UNSUPPORTED : 0;
    case FLU_AM_SHORT:
        return !(f & UCT_IFACE_FLAG_AM_SHORT) || op->am_id >= UCT_AM_ID_MAX ? UCS_ERR_UNSUPPORTED
                : op->length + sizeof(uint64_t) > a->cap.am.max_short ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_AM_BCOPY:
        return !(f & UCT_IFACE_FLAG_AM_BCOPY) || op->am_id >= UCT_AM_ID_MAX ? UCS_ERR_UNSUPPORTED
                : op->length > a->cap.am.max_bcopy
                        || (op->remote != 0 && op->compare > a->cap.am.max_bcopy - op->length)
                ? UCS_ERR_EXCEEDS_LIMIT : 0;
    case FLU_PENDING:
        return !(f & UCT_IFACE_FLAG_PENDING) ? UCS_ERR_UNSUPPORTED : 0;
    case FLU_FLUSH:
    case FLU_FENCE:
        return 0;
    default:
        return UCS_ERR_INVALID_PARAM;
    }
}

int flu_post(flu_ep_t *e, flu_op_t *op) {
    uct_ep_h ep = e->ep;
    flu_worker_t *w = e->iface->w;
    int refused = refuse(e->iface, op);
    if (refused != 0) {
        return refused;
    }
    void *local = (void *)(uintptr_t)op->local;
    uct_iov_t iov;
    iov.buffer = local;
    iov.length = op->length;
    iov.memh = (uct_mem_h)(uintptr_t)op->memh;
    iov.stride = 0;
    iov.count = 1;
    int amo = uct_amo(op->atomic_op);
    switch (op->kind) {
    case FLU_PUT_SHORT:
        return uct_ep_put_short(ep, local, (unsigned)op->length, op->remote, op->rkey);
    case FLU_PUT_BCOPY: {
        copy_arg_t a = {local, op->length};
        ssize_t n = uct_ep_put_bcopy(ep, pack, &a, op->remote, op->rkey);
        return n < 0 ? (int)n : UCS_OK;
    }
    case FLU_PUT_ZCOPY:
        WITH_COMPLETION(w, op, 8, uct_ep_put_zcopy(ep, &iov, 1, op->remote, op->rkey, &c->comp));
    case FLU_GET_SHORT:
        return uct_ep_get_short(ep, local, (unsigned)op->length, op->remote, op->rkey);
    case FLU_GET_BCOPY:
        WITH_COMPLETION(w, op, 8, uct_ep_get_bcopy(ep, unpack, local, op->length, op->remote, op->rkey, &c->comp));
    case FLU_GET_ZCOPY:
        WITH_COMPLETION(w, op, 8, uct_ep_get_zcopy(ep, &iov, 1, op->remote, op->rkey, &c->comp));
    case FLU_ATOMIC_POST:
        if (amo < 0 || amo == UCT_ATOMIC_OP_CSWAP) {
            return UCS_ERR_INVALID_PARAM;
        }
        return op->width == 4 ? uct_ep_atomic32_post(ep, amo, (uint32_t)op->value, op->remote, op->rkey)
                : op->width == 8 ? uct_ep_atomic64_post(ep, amo, op->value, op->remote, op->rkey)
                : UCS_ERR_INVALID_PARAM;
    case FLU_ATOMIC_FETCH:
        if (amo < 0 || amo == UCT_ATOMIC_OP_CSWAP) {
            return UCS_ERR_INVALID_PARAM;
        }
        if (op->width == 4) {
            WITH_COMPLETION(w, op, 4, uct_ep_atomic32_fetch(ep, amo, (uint32_t)op->value, &c->result.r32,
                                                            op->remote, op->rkey, &c->comp));
        }
        if (op->width == 8) {
            WITH_COMPLETION(w, op, 8, uct_ep_atomic64_fetch(ep, amo, op->value, &c->result.r64, op->remote,
                                                            op->rkey, &c->comp));
        }
        return UCS_ERR_INVALID_PARAM;
    case FLU_CSWAP:
        if (op->width == 4) {
            WITH_COMPLETION(w, op, 4, uct_ep_atomic_cswap32(ep, (uint32_t)op->compare, (uint32_t)op->value,
                                                            op->remote, op->rkey, &c->result.r32, &c->comp));
        }
        if (op->width == 8) {
            WITH_COMPLETION(w, op, 8, uct_ep_atomic_cswap64(ep, op->compare, op->value, op->remote, op->rkey,
                                                            &c->result.r64, &c->comp));
        }
        return UCS_ERR_INVALID_PARAM;
    case FLU_AM_SHORT:
        if (op->am_id >= UCT_AM_ID_MAX) {
            return UCS_ERR_INVALID_PARAM;
        }
        return uct_ep_am_short(ep, (uint8_t)op->am_id, op->value, local, (unsigned)op->length);
    case FLU_AM_BCOPY: {
        if (op->am_id >= UCT_AM_ID_MAX) {
            return UCS_ERR_INVALID_PARAM;
        }
        if (op->remote != 0) {
            gather_arg_t g = {local, op->length, (const void *)(uintptr_t)op->remote, op->compare};
            ssize_t n = uct_ep_am_bcopy(ep, (uint8_t)op->am_id, pack_gather, &g, 0);
            return n < 0 ? (int)n : UCS_OK;
        }
        copy_arg_t a = {local, op->length};
        ssize_t n = uct_ep_am_bcopy(ep, (uint8_t)op->am_id, pack, &a, 0);
        return n < 0 ? (int)n : UCS_OK;
    }
    case FLU_FLUSH:
        WITH_COMPLETION(w, op, 8, uct_ep_flush(ep, 0, &c->comp));
    case FLU_FENCE:
        return uct_ep_fence(ep, 0);
    case FLU_PENDING: {
        flu_pend_t *p = w->free_pends;
        if (p != NULL) {
            w->free_pends = p->next;
        } else if ((p = malloc(sizeof(*p))) == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        p->req.func = ready;
        p->w = w;
        p->token = op->token;
        ucs_status_t s = uct_ep_pending_add(ep, &p->req, 0);
        if (s != UCS_OK) {
            p->next = w->free_pends;
            w->free_pends = p;
        }
        return s;
    }
    default:
        return UCS_ERR_INVALID_PARAM;
    }
}


/* ---- the atomics probe ---- */

/* What op does to old with operand v. */
static uint64_t amo_apply(int op, uint64_t old, uint64_t v, uint64_t mask) {
    switch (op) {
    case FLU_AMO_ADD: return (old + v) & mask;
    case FLU_AMO_AND: return old & v;
    case FLU_AMO_OR: return old | v;
    case FLU_AMO_XOR: return old ^ v;
    default: return v; /* SWAP */
    }
}

/* Runs op until done on the probe endpoint; UCS_OK and the fetched value, or an error. */
static ucs_status_t probe_run(flu_ep_t *e, flu_op_t *op) {
    flu_worker_t *w = e->iface->w;
    size_t mark = w->st.length;
    int s = flu_post(e, op);
    for (int spins = 0; s == UCS_INPROGRESS && spins < 1000000; spins++) {
        uct_iface_progress(e->iface->iface);
        for (size_t at = mark; at + sizeof(flu_event_t) <= w->st.length;) {
            flu_event_t *ev = (flu_event_t *)(EVENTS(w) + at);
            if (ev->type == FLU_EV_COMPLETION && ev->token == op->token) {
                op->result = ev->value;
                s = ev->status;
                break;
            }
            at += sizeof(flu_event_t) + ((ev->length + 7) & ~(size_t)7);
        }
    }
    w->st.length = mark; /* the probe's events are its own */
    return s;
}

/*
 * Tries every atomic the iface claims on a scratch word of its own memory, through an endpoint to
 * itself, and keeps only those that leave the right value (and fetch the right old one).
 */
static void probe_atomics(flu_iface_t *i) {
    uint64_t md = i->md_attr.cap.flags;
    if (!(i->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) || !(md & (UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_REG))
            || (i->amo[0] | i->amo[1] | i->amo[2] | i->amo[3]) == 0) {
        return;
    }
    uint8_t addr[2 * FLU_MAX_ADDRESS + 4];
    long al = flu_iface_address(i, addr, sizeof(addr));
    uint64_t *scratch = NULL; /* for a domain that registers but cannot allocate */
    int access = FLU_ACCESS_READ | FLU_ACCESS_WRITE | FLU_ACCESS_ATOMIC;
    flu_mem_t *m = al <= 0 ? NULL
            : md & UCT_MD_FLAG_ALLOC ? flu_mem_alloc(i, 4096, access)
            : (scratch = aligned_alloc(64, 64)) == NULL ? NULL
            : flu_mem_reg(i, (long)(uintptr_t)scratch, 64, access);
    if (m == NULL) {
        free(scratch);
        return;
    }
    uint8_t key[1024];
    long kl = flu_mem_pack(m, key, sizeof(key));
    flu_rkey_t *r = kl >= 0 ? flu_rkey_unpack(i, key, kl) : NULL;
    flu_ep_t *e = r != NULL ? flu_ep_create(i, addr, al) : NULL;
    int stuck = 0; /* an operation did not complete: the device may still write the word */
    if (e != NULL) {
        volatile uint64_t *word = (volatile uint64_t *)m->address;
        for (int kind = 0; kind < 4 && !stuck; kind++) {
            int width = kind < 2 ? 4 : 8;
            int fetch = kind & 1;
            uint64_t mask = width == 4 ? 0xffffffffULL : ~0ULL;
            for (int op = 0; op <= FLU_AMO_CSWAP; op++) {
                if (!(i->amo[kind] & (1u << op)) || (op == FLU_AMO_CSWAP && !fetch)) {
                    continue;
                }
                uint64_t old = 0x5a5a5a5a0000000cULL & mask;
                uint64_t v = 0x0f0f0f0f0000000aULL & mask;
                *word = 0;
                if (width == 4) {
                    *(volatile uint32_t *)word = (uint32_t)old;
                } else {
                    *word = old;
                }
                flu_op_t o;
                memset(&o, 0, sizeof(o));
                o.kind = op == FLU_AMO_CSWAP ? FLU_CSWAP : fetch ? FLU_ATOMIC_FETCH : FLU_ATOMIC_POST;
                o.atomic_op = (uint32_t)op;
                o.width = (uint32_t)width;
                o.value = v;
                o.compare = old;
                o.remote = (uint64_t)(uintptr_t)m->address;
                o.rkey = r->bundle.rkey;
                o.token = ~0ULL;
                ucs_status_t s = probe_run(e, &o);
                if (s == UCS_OK && !fetch) {
                    o.kind = FLU_FLUSH;
                    s = probe_run(e, &o);
                }
                if (s == UCS_INPROGRESS) {
                    /* Given up on: none of the iface's atomics is trusted, and what the operation
                     * names (the key, the word) is kept until the iface is closed. */
                    stuck = 1;
                    for (int k = 0; k < 4; k++) {
                        i->refuted |= (uint64_t)(i->amo[k] & 0xff) << (k * 8);
                        i->amo[k] = 0;
                    }
                    break;
                }
                uint64_t now = width == 4 ? *(volatile uint32_t *)word : *word;
                uint64_t want = op == FLU_AMO_CSWAP ? v : amo_apply(op, old, v, mask);
                int right = s == UCS_OK && now == want && (!fetch || (o.result & mask) == old);
                if (!right) {
                    i->amo[kind] &= ~(1ULL << op);
                    i->refuted |= 1ULL << (kind * 8 + op);
                }
            }
        }
        i->verified = 1;
        if (stuck) { /* kept until the iface closes (flu_iface_close) */
            i->probe_mem = m;
            i->probe_rkey = r;
            i->probe_scratch = scratch;
            return;
        }
        flu_ep_destroy(e);
    }
    if (r != NULL) {
        flu_rkey_release(r);
    }
    flu_mem_free(m);
    free(scratch);
}

/* ---- memory ---- */

flu_mem_t *flu_mem_alloc(flu_iface_t *i, long length, int access) {
    flu_mem_t *m = calloc(1, sizeof(*m));
    if (m == NULL || length <= 0) {
        free(m);
        fail(i->w, UCS_ERR_INVALID_PARAM, "cannot allocate UCT memory%s%s", "", "");
        return NULL;
    }
    /* The memory domain's own allocation (a shared segment for posix and sysv), not the iface's:
     * it needs no worker, so the caller's thread may run it while the worker progresses. */
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_FLAGS | UCT_MEM_ALLOC_PARAM_FIELD_MDS
            | UCT_MEM_ALLOC_PARAM_FIELD_NAME | UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE;
    params.flags = mem_flags(access);
    params.mem_type = UCS_MEMORY_TYPE_HOST;
    params.mds.mds = &i->md;
    params.mds.count = 1;
    params.name = "fenceline";
    ucs_status_t s = uct_mem_alloc((size_t)length, &method, 1, &params, &m->alloc);
    if (s != UCS_OK) {
        fail(i->w, s, "UCT could not allocate registered memory%s%s", "", "");
        free(m);
        return NULL;
    }
    m->iface = i;
    m->allocated = 1;
    m->memh = m->alloc.memh;
    m->address = m->alloc.address;
    m->length = m->alloc.length;
    return m;
}

flu_mem_t *flu_mem_reg(flu_iface_t *i, long address, long length, int access) {
    if (!(i->md_attr.cap.flags & UCT_MD_FLAG_REG)) {
        fail(i->w, UCS_ERR_UNSUPPORTED, "memory domain %s%s cannot register memory", i->md_attr.component_name, "");
        return NULL;
    }
    flu_mem_t *m = calloc(1, sizeof(*m));
    if (m == NULL || length <= 0) {
        free(m);
        fail(i->w, UCS_ERR_INVALID_PARAM, "cannot register UCT memory%s%s", "", "");
        return NULL;
    }
    ucs_status_t s = uct_md_mem_reg(i->md, (void *)(uintptr_t)address, (size_t)length, mem_flags(access), &m->memh);
    if (s != UCS_OK) {
        fail(i->w, s, "UCT could not register the memory%s%s", "", "");
        free(m);
        return NULL;
    }
    m->iface = i;
    m->address = (void *)(uintptr_t)address;
    m->length = (size_t)length;
    return m;
}

long flu_mem_address(flu_mem_t *m) {
    return (long)(uintptr_t)m->address;
}

long flu_mem_length(flu_mem_t *m) {
    return (long)m->length;
}

long flu_mem_handle(flu_mem_t *m) {
    return (long)(uintptr_t)m->memh;
}

long flu_mem_pack(flu_mem_t *m, uint8_t *buf, long cap) {
    size_t size = m->iface->md_attr.rkey_packed_size;
    if ((long)size > cap) {
        return UCS_ERR_BUFFER_TOO_SMALL;
    }
    ucs_status_t s = uct_md_mkey_pack(m->iface->md, m->memh, buf);
    return s == UCS_OK ? (long)size : s;
}

void flu_mem_free(flu_mem_t *m) {
    if (m->allocated) {
        uct_mem_free(&m->alloc);
    } else {
        uct_md_mem_dereg(m->iface->md, m->memh);
    }
    free(m);
}

flu_rkey_t *flu_rkey_unpack(flu_iface_t *i, const uint8_t *buf, long len) {
    if (len != (long)i->md_attr.rkey_packed_size) {
        fail(i->w, UCS_ERR_INVALID_PARAM, "a remote key of the wrong length for %s%s", i->md_attr.component_name, "");
        return NULL;
    }
    if (i->posix && (len < 8 || !posix_named_by_proc(buf))) {
        fail(i->w, UCS_ERR_INVALID_PARAM, "a posix remote key naming its segment otherwise than through /proc%s%s",
             "", "");
        return NULL;
    }
    flu_rkey_t *r = calloc(1, sizeof(*r));
    uint8_t *copy = calloc(1, (size_t)len + FLU_PEER_PADDING); /* UCT may read a string from the key */
    if (r == NULL || copy == NULL) {
        free(r);
        free(copy);
        fail(i->w, UCS_ERR_NO_MEMORY, "out of memory%s%s", "", "");
        return NULL;
    }
    memcpy(copy, buf, (size_t)len);
    ucs_status_t s = uct_rkey_unpack(i->component, copy, &r->bundle);
    free(copy);
    if (s != UCS_OK) {
        fail(i->w, s, "UCT refused the remote key%s%s", "", "");
        free(r);
        return NULL;
    }
    r->component = i->component;
    return r;
}

long flu_rkey_value(flu_rkey_t *r) {
    return (long)r->bundle.rkey;
}

long flu_rkey_ptr(flu_rkey_t *r, long remote) {
    void *p;
    return uct_rkey_ptr(r->component, &r->bundle, (uint64_t)remote, &p) == UCS_OK ? (long)(uintptr_t)p : 0;
}

void flu_rkey_release(flu_rkey_t *r) {
    uct_rkey_release(r->component, &r->bundle);
    free(r);
}
