/*
 * core-to-core: how long one cache line takes to go from one CPU to another and back, as two
 * threads, each kept to its CPU, hand a counter back and forth through it. Prints the one-way time
 * in nanoseconds (the mean of the round trips, halved).
 *
 * bin/compare-ucx runs it beside its latency rows over shared memory: on a virtual machine the host
 * may move the two CPUs closer together or further apart while the rows run, and every ping-pong
 * through memory (ucx_perftest's and Fenceline's alike) then moves with it.
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

static volatile uint64_t line[8] __attribute__((aligned(64)));
static long round_trips;

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *arg) {
    int cpu = *(int *)arg;
    int err = pin(cpu);
    if (err != 0) {
        fprintf(stderr, "core-to-core: CPU %d: %s\n", cpu, strerror(err));
        exit(2);
    }
    for (uint64_t i = 1; i <= (uint64_t)round_trips; i++) {
        while (line[0] != 2 * i - 1) {
        }
        line[0] = 2 * i;
    }
    return NULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cpu_arg(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v >= CPU_SETSIZE) {
        fprintf(stderr, "core-to-core: '%s' is not a CPU number (0 to %d)\n", s, CPU_SETSIZE - 1);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: core-to-core CPU_A CPU_B [ROUND_TRIPS]\n");
        return 2;
    }
    int a = cpu_arg(argv[1]);
    int b = cpu_arg(argv[2]);
    round_trips = argc == 4 ? strtol(argv[3], NULL, 10) : 200000;
    if (round_trips < 1 || round_trips > 1000000000L) {
        fprintf(stderr, "core-to-core: round trips '%s': expected 1 to 1000000000\n", argv[3]);
        return 2;
    }
    int err = pin(a);
    if (err != 0) {
        fprintf(stderr, "core-to-core: CPU %d: %s\n", a, strerror(err));
        return 2;
    }
    pthread_t t;
    if ((err = pthread_create(&t, NULL, answer, &b)) != 0) {
        fprintf(stderr, "core-to-core: thread: %s\n", strerror(err));
        return 2;
    }
    double t0 = now_ns();
    for (uint64_t i = 1; i <= (uint64_t)round_trips; i++) {
        line[0] = 2 * i - 1;
        while (line[0] != 2 * i) {
        }
    }
    double t1 = now_ns();
    pthread_join(t, NULL);
    printf("%.1f\n", (t1 - t0) / round_trips / 2);
    return 0;
}
