// The tail of what the process wrote to its standard error, kept in a fixed ring
// (see strain_probe.h). Only the preload feeds it (its `write` and `writev` for fd
// 2, and stdio's entry points for a stream on fd 2); in a trial it stays empty.
// Everything here is async-signal-safe.
#include "strain_probe.h"
#include "strain_internal.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static char strain_stderr_ring[STRAIN_STDERR_TAIL_BYTES];
/// Bytes kept since the start (or the last forget): the ring's end is at this modulo its size.
static _Atomic unsigned long long strain_stderr_total;

void strain_stderr_keep(const void *bytes, size_t length) {
    if (bytes == NULL || length == 0) return;
    const char *from = bytes;
    unsigned long long start = atomic_fetch_add_explicit(&strain_stderr_total, length, memory_order_relaxed);
    // Only the last ring's worth of a longer write can stay.
    size_t skip = length > STRAIN_STDERR_TAIL_BYTES ? length - STRAIN_STDERR_TAIL_BYTES : 0;
    for (size_t done = skip; done < length;) {
        size_t at = (size_t)((start + done) % STRAIN_STDERR_TAIL_BYTES);
        size_t chunk = STRAIN_STDERR_TAIL_BYTES - at;
        if (chunk > length - done) chunk = length - done;
        memcpy(strain_stderr_ring + at, from + done, chunk);
        done += chunk;
    }
}

void strain_stderr_forget(void) { atomic_store_explicit(&strain_stderr_total, 0, memory_order_relaxed); }

static int strain_stderr_put(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, bytes, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        bytes += n;
        length -= (size_t)n;
    }
    return 1;
}

void strain_stderr_write_tail(void) {
    unsigned long long end = atomic_load_explicit(&strain_stderr_total, memory_order_relaxed);
    if (end == 0) return;
    char path[PATH_MAX], temporary[PATH_MAX];
    if (!strain_record_name(path, sizeof(path), "stderr-", -1, ".txt") || !strain_record_name(temporary, sizeof(temporary), "stderr-", -1, ".tmp")) return;
    int fd = strain_probe_record_open(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0) return;
    size_t count = end < STRAIN_STDERR_TAIL_BYTES ? (size_t)end : STRAIN_STDERR_TAIL_BYTES;
    size_t first = (size_t)((end - count) % STRAIN_STDERR_TAIL_BYTES);
    size_t before_wrap = STRAIN_STDERR_TAIL_BYTES - first < count ? STRAIN_STDERR_TAIL_BYTES - first : count;
    int whole = strain_stderr_put(fd, strain_stderr_ring + first, before_wrap) && strain_stderr_put(fd, strain_stderr_ring, count - before_wrap);
    close(fd);
    if (whole) strain_record_rename(temporary, path); else strain_record_remove(temporary);
}

#pragma clang attribute pop
