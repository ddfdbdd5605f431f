// Ordinary code the probe must not carry: names for frames (the parent's
// symbolizer), the reference loop and a null dereference for the scenarios.
#include "strain_tools.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

// MARK: - Demangling (used by the parent's symbolizer)

// Exported by the Swift runtime (libswiftCore) and by libstdc++ respectively:
// the reason this file is not part of the preloadable probe.
extern char *swift_demangle(const char *mangled, size_t length, char *buffer, size_t *buffer_size, uint32_t flags);
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

char *strain_demangle_swift(const char *name) {
    if (name == NULL) return NULL;
    return swift_demangle(name, strlen(name), NULL, NULL, 0);
}

char *strain_demangle_cxx(const char *name) {
    if (name == NULL || strncmp(name, "_Z", 2) != 0) return NULL;
    int status = 0;
    char *result = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? result : NULL;
}

// MARK: - Faults on purpose

void strain_crash_null_dereference(void) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

// MARK: - Reference loop

static uint64_t strain_tools_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

double strain_reference_mutex_ns(long iterations) {
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    uint64_t start = strain_tools_monotonic_ns();
    for (long i = 0; i < iterations; i++) {
        pthread_mutex_lock(&mutex);
        // Keep the compiler from merging or dropping the pairs.
        __asm__ __volatile__("" ::: "memory");
        pthread_mutex_unlock(&mutex);
    }
    uint64_t end = strain_tools_monotonic_ns();
    pthread_mutex_destroy(&mutex);
    return iterations > 0 ? (double)(end - start) / (double)iterations : 0;
}
