// What the probe's malloc family costs per allocation, in one process: rounds of
// malloc(32)/free pairs on THREADS threads at once, counting on and off
// alternately (which goes first alternates), each thread timing its own CPU.
// Prints the medians of the nanoseconds per pair, counting off and on, and the
// median of the rounds' ratios. The callers here are C, outside the Swift
// runtime, so the site walk stops at once: a Swift allocation walks two or
// three runtime frames more.
//
//   clang -O2 -D_GNU_SOURCE -I Sources/CStrainProbe/include Sources/CStrainProbe/strain_alloc.c \
//      Tests/Benchmarks/alloc-overhead/interposer.c -lpthread -o /tmp/interposer && /tmp/interposer
#include "strain_probe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 2
#define PAIRS 2000000
#define ROUNDS 21

static double thread_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

static void *hammer(void *out) {
    double start = thread_seconds();
    for (int index = 0; index < PAIRS; index++) {
        void *volatile block = malloc(32);
        free(block);
    }
    *(double *)out = (thread_seconds() - start) * 1e9 / PAIRS;
    return NULL;
}

static double round_ns(int counting) {
    if (counting) strain_alloc_begin(1);
    pthread_t threads[THREADS];
    double ns[THREADS];
    for (int index = 0; index < THREADS; index++) pthread_create(&threads[index], NULL, hammer, &ns[index]);
    for (int index = 0; index < THREADS; index++) pthread_join(threads[index], NULL);
    strain_alloc_end();
    if (counting && strain_alloc_read_totals().allocations < (uint64_t)THREADS * PAIRS) {
        fprintf(stderr, "counted %llu allocations, fewer than made\n", (unsigned long long)strain_alloc_read_totals().allocations);
        exit(1);
    }
    double sum = 0;
    for (int index = 0; index < THREADS; index++) sum += ns[index];
    return sum / THREADS;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    double off[ROUNDS], on[ROUNDS], ratio[ROUNDS];
    for (int index = 0; index < ROUNDS; index++) {
        if (index % 2 == 0) {
            off[index] = round_ns(0);
            on[index] = round_ns(1);
        } else {
            on[index] = round_ns(1);
            off[index] = round_ns(0);
        }
        ratio[index] = on[index] / off[index];
    }
    qsort(off, ROUNDS, sizeof(double), compare);
    qsort(on, ROUNDS, sizeof(double), compare);
    qsort(ratio, ROUNDS, sizeof(double), compare);
    printf("%d rounds of %d malloc(32)/free pairs on %d threads: off %.1f ns a pair, on %.1f ns (+%.1f ns), median round ratio %.3f [%.3f-%.3f]\n",
           ROUNDS, PAIRS, THREADS, off[ROUNDS / 2], on[ROUNDS / 2], on[ROUNDS / 2] - off[ROUNDS / 2], ratio[ROUNDS / 2], ratio[0], ratio[ROUNDS - 1]);
    return 0;
}
