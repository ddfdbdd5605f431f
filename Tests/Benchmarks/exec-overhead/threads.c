// The overhead benchmark of `strain exec` (run.py runs it): what a program pays
// for the preloaded probe. Prints one line: `<mode> <wall seconds> <CPU seconds>
// <rate>/s`, CPU seconds being the process' user and system time (threads) or
// the two workers' own CPU time (throughput): on a shared machine the CPU time
// is the steadier of the two.
//
//   threads N      create and join N threads, one at a time (each gets and frees
//                  an alternate signal stack under the probe)
//   throughput N   N iterations of hashing under a mutex on 2 threads (the probe
//                  is not on this path at all)
//   alternate N    N rounds, each creating and joining 200 threads through the
//                  pthread_create the program links (the probe's, under strain
//                  exec) and 200 through libc's own, which goes first alternating;
//                  prints the medians of the CPU time per thread of each and of
//                  the rounds' ratios: one process, so no drift between processes
#include <dlfcn.h>
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

static double cpu_of(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *nothing(void *argument) { return argument; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_total;
static long iterations;

static double worker_cpu[2];

static void *hash_loop(void *argument) {
    int index = (int)(uintptr_t)argument - 1;
    double cpu_start = cpu_of(CLOCK_THREAD_CPUTIME_ID);
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
    worker_cpu[index] = cpu_of(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    return NULL;
}

typedef int (*create_function)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *values, long count) {
    qsort(values, (size_t)count, sizeof(double), compare_doubles);
    return values[count / 2];
}

static int alternate(long rounds) {
    enum { batch = 200 };
    void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    create_function direct = libc != NULL ? (create_function)dlsym(libc, "pthread_create") : NULL;
    if (direct == NULL) return 1;
    double *linked = malloc(sizeof(double) * (size_t)rounds), *own = malloc(sizeof(double) * (size_t)rounds), *ratios = malloc(sizeof(double) * (size_t)rounds);
    if (linked == NULL || own == NULL || ratios == NULL) return 1;
    for (long round = 0; round < rounds; round++) {
        for (int step = 0; step < 2; step++) {
            int through_linked = (round % 2 == 0) == (step == 0);
            double cpu_start = cpu_of(CLOCK_PROCESS_CPUTIME_ID);
            for (int i = 0; i < batch; i++) {
                pthread_t thread;
                if ((through_linked ? pthread_create(&thread, NULL, nothing, NULL) : direct(&thread, NULL, nothing, NULL)) != 0) return 1;
                pthread_join(thread, NULL);
            }
            double per_thread = (cpu_of(CLOCK_PROCESS_CPUTIME_ID) - cpu_start) / batch;
            if (through_linked) linked[round] = per_thread; else own[round] = per_thread;
        }
        ratios[round] = linked[round] / own[round];
    }
    double ratio = median(ratios, rounds);
    printf("alternate %.9f %.9f %.4f\n", median(own, rounds), median(linked, rounds), ratio);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: threads threads|throughput|alternate N\n");
        return 64;
    }
    long count = atol(argv[2]);
    if (count < 1 || count > 10000000000L) {
        fprintf(stderr, "N must be 1 to 10000000000\n");
        return 64;
    }
    if (strcmp(argv[1], "alternate") == 0) return alternate(count);
    if (strcmp(argv[1], "threads") == 0) {
        double start = now();
        double cpu_start = cpu_of(CLOCK_PROCESS_CPUTIME_ID);
        for (long i = 0; i < count; i++) {
            pthread_t thread;
            if (pthread_create(&thread, NULL, nothing, NULL) != 0) return 1;
            pthread_join(thread, NULL);
        }
        double seconds = now() - start;
        double cpu = cpu_of(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
        printf("threads %.6f %.6f %.0f/s\n", seconds, cpu, (double)count / seconds);
    } else {
        iterations = count;
        pthread_t threads[2];
        double start = now();
        for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, hash_loop, (void *)(uintptr_t)(i + 1));
        for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
        double seconds = now() - start;
        printf("throughput %.6f %.6f %.0f/s (%llu)\n", seconds, worker_cpu[0] + worker_cpu[1], 2.0 * (double)count / seconds,
               (unsigned long long)(shared_total & 0xff));
    }
    return 0;
}
