// Instructions counted around the scenario's measured work: by Valgrind's callgrind,
// or by a perf counter (below).
//
// What is counted: the instructions each thread runs while it holds scenario work
// (between strain_work_enter and strain_work_leave, outermost), and the host thread's
// from strain_instr_begin to strain_instr_end, for the work callgrind saw between
// those two. Not counted: harness threads, a thread's start and exit, a GCD worker
// spinning before it parks, a thread that finished `prepare` exiting: all of them
// are scheduled by time, and counted they made repetitions of one noop trial differ
// by half (361,362 and 696,727 instructions; the prepare thread's exit raced the work).
//
// How: the runner starts callgrind with instrumentation and collection off
// (`--instr-atstart=no --collect-atstart=no`). strain_instr_begin switches the
// instrumentation on for the process (START_INSTRUMENTATION, which also resets every
// thread's collection to off: measured, a thread that had turned its own off before
// the start was counted after it); each thread then turns its own collection on
// while it holds work (CALLGRIND_TOGGLE_COLLECT is per thread). strain_instr_end has
// callgrind write the part so far (trigger `strain-work`) and switches the
// instrumentation off. ZERO_STATS would not do: it zeroes the calling thread only
// (measured: a worker's instructions from before it were in the dump).
//
// The counted trial server is started with the instrumentation on instead
// (`--instr-atstart=yes`, collection still off), and its copies neither start nor stop
// it (`instrumented`): switching it flushes every translation Valgrind made, so each
// copy translated all the code it ran twice more, most of a counted copy's 420 ms;
// on from the start, a copy inherits the server's translations through the fork.
// Collection stays per thread, on only while a thread holds work, and every thread's
// is off outside a count (toggles are paired by generation), so the counts are the
// same: nothing was collected before the count to be written in its part.
//
// Or by a perf counter (the `pmu` source, strain_perf_begin/strain_perf_end): each
// thread that holds work opens, once, a counter of its own (perf_event_open with pid
// 0, cpu -1, user space only: exclude_kernel, exclude_hv), reads it as its work
// starts and ends, and adds the difference to one total for the process. The host
// thread is counted from strain_perf_begin to strain_perf_end, as under callgrind.
// The event is the caller's: PERF_TYPE_HARDWARE/PERF_COUNT_HW_INSTRUCTIONS where the
// machine has a PMU, and a software event (task-clock) in the tests of a VM that has
// none, so the very same code runs in both. A thread's counter is closed when the
// thread exits. A thread that cannot open its counter (EMFILE) is not counted: the
// first such errno is kept and strain_perf_end returns it, so the count is refused
// rather than short. A thread still inside work at strain_perf_end is not counted.
//
// Outside a count the cost in strain_work_enter/leave is one load and a branch, for
// both sources. Built without Valgrind's headers (<valgrind/callgrind.h>, Debian's
// `valgrind`), the callgrind functions do nothing, the part is never written, and the
// runner says so; the perf counters do not need them.
#include "strain_probe.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define STRAIN_HAS_CALLGRIND 1
#endif
#endif

// Odd while a count runs; each begin and end moves it on, so a thread that turned its
// collection on in an earlier count never turns it off again by mistake.
/* sigsuspend, with the mask copied to the caller's stack first. Valgrind 3.19 (Debian
 * 12's) writes into the mask it is given (it removes its own kill signal from it) and
 * dies with SIGSEGV when the mask is read-only: libdispatch's dispatch_main parks the
 * main thread in sigsuspend on a `static const sigset_t`, and every Swift program whose
 * main is async (a Swift Testing binary, re-run for a counted expectation) goes through
 * it, so callgrind died at the first thread started after. Defined here, in every
 * binary the probe is linked into, it comes before libc's for the shared libraries
 * (the linker exports it, as it does the malloc family in strain_alloc.c); the call is
 * otherwise libc's own (`__sigsuspend`, the same function), cancellation point and all. */
extern int __sigsuspend(const sigset_t *mask);
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return __sigsuspend(&copy);
}

static _Atomic unsigned strain_instr_generation;
// The generation in which this thread turned its collection on; 0 when it has not.
static __thread unsigned strain_instr_thread_generation;
// What the running count uses: 0 callgrind's client requests, 1 a perf counter.
// Written before the generation turns odd (release), read after it was seen odd.
static _Atomic int strain_instr_uses_perf;

// The perf counter's event, fixed by strain_perf_begin before the count starts.
static _Atomic uint32_t strain_perf_type;
static _Atomic uint64_t strain_perf_config;
// What the threads counted, and the errno of the first thread whose counter did not open.
static _Atomic uint64_t strain_perf_total;
static _Atomic int strain_perf_open_errno;
// This thread's counter: -1 before its first work in a count, -2 when it could not be opened.
static __thread int strain_perf_fd = -1;
static __thread uint64_t strain_perf_at_enter;
// Closes a thread's counter as the thread exits (the value stored is fd + 1).
static pthread_key_t strain_perf_key;
static pthread_once_t strain_perf_key_once = PTHREAD_ONCE_INIT;

static void strain_perf_close(void *value) { close((int)(intptr_t)value - 1); }
static void strain_perf_make_key(void) { pthread_key_create(&strain_perf_key, strain_perf_close); }

// A counter of `type`/`config` for the calling thread, user space only; -errno on failure.
static int strain_perf_open(uint32_t type, uint64_t config) {
    struct perf_event_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.size = sizeof attributes;
    attributes.type = type;
    attributes.config = config;
    attributes.exclude_kernel = 1;
    attributes.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attributes, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

int strain_perf_event_opens(uint32_t type, uint64_t config) {
    int fd = strain_perf_open(type, config);
    if (fd < 0) return -fd;
    uint64_t value;
    int failed = read(fd, &value, sizeof value) == (ssize_t)sizeof value ? 0 : (errno ? errno : EIO);
    close(fd);
    return failed;
}

// The thread's counter now; 0 (and the count refused) when it cannot be read.
static uint64_t strain_perf_read(void) {
    uint64_t value = 0;
    if (read(strain_perf_fd, &value, sizeof value) != (ssize_t)sizeof value) {
        int expected = 0;
        atomic_compare_exchange_strong(&strain_perf_open_errno, &expected, errno ? errno : EIO);
    }
    return value;
}

static void strain_perf_thread_on(void) {
    if (strain_perf_fd == -1) {
        int fd = strain_perf_open(atomic_load_explicit(&strain_perf_type, memory_order_relaxed),
                                  atomic_load_explicit(&strain_perf_config, memory_order_relaxed));
        if (fd < 0) {
            int expected = 0;
            atomic_compare_exchange_strong(&strain_perf_open_errno, &expected, -fd);
            strain_perf_fd = -2;
            return;
        }
        strain_perf_fd = fd;
        pthread_once(&strain_perf_key_once, strain_perf_make_key);
        pthread_setspecific(strain_perf_key, (void *)(intptr_t)(fd + 1));
    }
    if (strain_perf_fd >= 0) strain_perf_at_enter = strain_perf_read();
}

static void strain_perf_thread_off(void) {
    if (strain_perf_fd < 0) return;
    uint64_t now = strain_perf_read();
    atomic_fetch_add_explicit(&strain_perf_total, now - strain_perf_at_enter, memory_order_relaxed);
}

int strain_instr_under_valgrind(void) {
#ifdef STRAIN_HAS_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

int strain_instr_counting(void) {
    return (atomic_load_explicit(&strain_instr_generation, memory_order_acquire) & 1) != 0;
}

void strain_instr_thread_on(void) {
    unsigned generation = atomic_load_explicit(&strain_instr_generation, memory_order_acquire);
    if (__builtin_expect((generation & 1) == 0, 1) || strain_instr_thread_generation == generation) return;
    strain_instr_thread_generation = generation;
    if (atomic_load_explicit(&strain_instr_uses_perf, memory_order_relaxed)) {
        strain_perf_thread_on();
        return;
    }
#ifdef STRAIN_HAS_CALLGRIND
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

void strain_instr_thread_off(void) {
    unsigned generation = atomic_load_explicit(&strain_instr_generation, memory_order_acquire);
    if (__builtin_expect((generation & 1) == 0, 1) || strain_instr_thread_generation != generation) return;
    strain_instr_thread_generation = 0;
    if (atomic_load_explicit(&strain_instr_uses_perf, memory_order_relaxed)) {
        strain_perf_thread_off();
        return;
    }
#ifdef STRAIN_HAS_CALLGRIND
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

void strain_perf_begin(uint32_t type, uint64_t config) {
    if (strain_instr_counting()) return;  // a count runs already
    atomic_store_explicit(&strain_perf_type, type, memory_order_relaxed);
    atomic_store_explicit(&strain_perf_config, config, memory_order_relaxed);
    atomic_store_explicit(&strain_perf_total, 0, memory_order_relaxed);
    atomic_store_explicit(&strain_perf_open_errno, 0, memory_order_relaxed);
    atomic_store_explicit(&strain_instr_uses_perf, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&strain_instr_generation, 1, memory_order_acq_rel);
    strain_instr_thread_on();
}

int strain_perf_end(uint64_t *total) {
    *total = 0;
    if (!strain_instr_counting() || !atomic_load_explicit(&strain_instr_uses_perf, memory_order_relaxed)) return EINVAL;
    strain_instr_thread_off();
    atomic_fetch_add_explicit(&strain_instr_generation, 1, memory_order_acq_rel);
    *total = atomic_load_explicit(&strain_perf_total, memory_order_relaxed);
    return atomic_load_explicit(&strain_perf_open_errno, memory_order_relaxed);
}

void strain_instr_begin(int instrumented) {
#ifdef STRAIN_HAS_CALLGRIND
    if (!RUNNING_ON_VALGRIND) return;
    atomic_store_explicit(&strain_instr_uses_perf, 0, memory_order_relaxed);
    if (!instrumented) CALLGRIND_START_INSTRUMENTATION;
    atomic_fetch_add_explicit(&strain_instr_generation, 1, memory_order_acq_rel);
    strain_instr_thread_on();
#endif
}

void strain_instr_end(int instrumented) {
#ifdef STRAIN_HAS_CALLGRIND
    if (!RUNNING_ON_VALGRIND) return;
    strain_instr_thread_off();
    CALLGRIND_DUMP_STATS_AT("strain-work");
    if (!instrumented) CALLGRIND_STOP_INSTRUMENTATION;
    atomic_fetch_add_explicit(&strain_instr_generation, 1, memory_order_acq_rel);
#endif
}

#pragma clang attribute pop
