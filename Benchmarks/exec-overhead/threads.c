// The overhead benchmark of `strain exec` (see README.md here): what a program
// pays for the preloaded probe. Prints one line, `<mode> <seconds> <rate>/s`.
//
//   threads N      create and join N threads, one at a time (each gets and frees
//                  an alternate signal stack under the probe)
//   throughput N   N iterations of hashing under a mutex on 2 threads (the probe
//                  is not on this path at all)
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *nothing(void *argument) { return argument; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_total;
static long iterations;

static void *hash_loop(void *argument) {
    uint64_t hash = (uint64_t)(uintptr_t)argument | 1;
    for (long i = 0; i < iterations; i++) {
        hash ^= (uint64_t)i;
        hash *= 0x100000001b3ULL;
        if ((i & 1023) == 0) {
            pthread_mutex_lock(&lock);
            shared_total += hash;
            pthread_mutex_unlock(&lock);
        }
    }
    pthread_mutex_lock(&lock);
    shared_total += hash;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: threads threads|throughput N\n");
        return 64;
    }
    long count = atol(argv[2]);
    if (strcmp(argv[1], "threads") == 0) {
        double start = now();
        for (long i = 0; i < count; i++) {
            pthread_t thread;
            if (pthread_create(&thread, NULL, nothing, NULL) != 0) return 1;
            pthread_join(thread, NULL);
        }
        double seconds = now() - start;
        printf("threads %.6f %.0f/s\n", seconds, (double)count / seconds);
    } else {
        iterations = count;
        pthread_t threads[2];
        double start = now();
        for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, hash_loop, (void *)(uintptr_t)(i + 1));
        for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
        double seconds = now() - start;
        printf("throughput %.6f %.0f/s (%llu)\n", seconds, 2.0 * (double)count / seconds, (unsigned long long)(shared_total & 0xff));
    }
    return 0;
}
