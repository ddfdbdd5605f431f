// Faults on purpose, for the fault suite (each a real fault, not raise()), and
// the reference loop: ordinary code a scenario runs, kept apart from the
// runner's C (CStrainTools) so the SDK does not link it.
#include "strain_faults.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

// MARK: - Faults on purpose

void strain_crash_null_dereference(void) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

void strain_crash_bus_error(void) {
    // A mapping past the end of its file: touching it is SIGBUS (BUS_ADRERR).
    char path[] = "/tmp/strain-bus-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return;
    unlink(path);
    if (ftruncate(fd, 4096) != 0) { close(fd); return; }
    volatile char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) { close(fd); return; }
    // Shrink the file under the mapping: the page has no backing any more.
    if (ftruncate(fd, 0) != 0) { close(fd); return; }
    close(fd);
    page[0] = 1;
}

int strain_crash_divide_by_zero(int numerator) {
    // An integer division by zero in C is SIGFPE (FPE_INTDIV) on x86-64; Swift's
    // own `/` would trap with SIGILL before dividing.
    volatile int zero = 0;
    return numerator / zero;
}

// std::terminate() from libstdc++ (linked for __cxa_demangle): what an uncaught C++
// exception ends in, "terminate called without an active exception" then abort().
extern void _ZSt9terminatev(void) __attribute__((noreturn));
void strain_crash_cxx_terminate(void) { _ZSt9terminatev(); }

// MARK: - Reference loop

static uint64_t strain_faults_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

double strain_reference_mutex_ns(long iterations) {
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    uint64_t start = strain_faults_monotonic_ns();
    for (long i = 0; i < iterations; i++) {
        pthread_mutex_lock(&mutex);
        // Keep the compiler from merging or dropping the pairs.
        __asm__ __volatile__("" ::: "memory");
        pthread_mutex_unlock(&mutex);
    }
    uint64_t end = strain_faults_monotonic_ns();
    pthread_mutex_destroy(&mutex);
    return iterations > 0 ? (double)(end - start) / (double)iterations : 0;
}

#pragma clang attribute pop
