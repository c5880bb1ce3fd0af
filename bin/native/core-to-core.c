/*
 * core-to-core: how long one cache line takes to go from one CPU to another and back, as two
 * threads, each kept to its CPU, hand a counter back and forth through it. Prints the one-way time
 * in nanoseconds (the mean of the round trips, halved), after a warm-up the clock does not see.
 *
 * bin/compare-ucx runs it around each round of its rows over shared memory: on a virtual machine the
 * host may move the two CPUs closer together or further apart while the rows run, and every
 * ping-pong through memory (ucx_perftest's and Fenceline's alike) then moves with them.
 *
 * usage: core-to-core CPU_A CPU_B [ROUND_TRIPS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARM_UP 10000

/* The line the two threads hand back and forth: odd values are A's, even ones B's. */
static uint64_t line[8] __attribute__((aligned(64)));
static uint64_t total; /* warm-up and measured round trips; written before the thread starts */

static void put(uint64_t v) {
    __atomic_store_n(&line[0], v, __ATOMIC_RELEASE);
}

static void await(uint64_t v) {
    while (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) != v) {
    }
}

static void *answer(void *arg) {
    (void)arg;
    for (uint64_t i = 1; i <= total; i++) {
        await(2 * i - 1);
        put(2 * i);
    }
    return NULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static long number(const char *what, const char *s, long max) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < 0 || v > max) {
        fprintf(stderr, "core-to-core: %s '%s': expected a whole number, 0 to %ld\n", what, s, max);
        exit(2);
    }
    return v;
}

static void refused(int cpu, int err) {
    fprintf(stderr, "core-to-core: CPU %d: %s\n", cpu,
            err == EINVAL ? "not one this process may run on" : strerror(err));
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: core-to-core CPU_A CPU_B [ROUND_TRIPS]\n");
        return 2;
    }
    int a = (int)number("CPU", argv[1], CPU_SETSIZE - 1);
    int b = (int)number("CPU", argv[2], CPU_SETSIZE - 1);
    if (a == b) {
        fprintf(stderr, "core-to-core: CPU %d twice: the two threads need a CPU each\n", a);
        return 2;
    }
    long trips = argc == 4 ? number("round trips", argv[3], 1000000000L) : 200000;
    if (trips < 1) {
        fprintf(stderr, "core-to-core: round trips: at least 1\n");
        return 2;
    }
    total = WARM_UP + (uint64_t)trips;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(a, &set);
    int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (err != 0) {
        refused(a, err);
    }
    /* The answering thread starts on its own CPU, not queued behind this one's spinning. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    CPU_ZERO(&set);
    CPU_SET(b, &set);
    pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    pthread_t t;
    if ((err = pthread_create(&t, &attr, answer, NULL)) != 0) {
        if (err == EINVAL) {
            refused(b, err);
        }
        fprintf(stderr, "core-to-core: thread: %s\n", strerror(err));
        return 2;
    }
    pthread_attr_destroy(&attr);
    uint64_t i = 1;
    for (; i <= WARM_UP; i++) {
        put(2 * i - 1);
        await(2 * i);
    }
    double t0 = now_ns();
    for (; i <= total; i++) {
        put(2 * i - 1);
        await(2 * i);
    }
    double t1 = now_ns();
    pthread_join(t, NULL);
    printf("%.1f\n", (t1 - t0) / trips / 2);
    return 0;
}
