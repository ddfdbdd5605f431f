// Measures libunwind's cached fast trace (unw_backtrace) against the unw_step loop
// the fault handler falls back to, on the same interrupted stack, frame by frame:
// the raw measurement of the two (the handler's own walk: strain_fault_walk.c).
#include "strain_walk_compare.h"
#include "strain_probe.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// The handler's inputs and outputs: one comparison at a time (the caller is a test).
static uintptr_t *strain_compare_step;
static uintptr_t *strain_compare_fast;
static size_t strain_compare_capacity;
static strain_walk_comparison *strain_compare_out;
// Where an overflow's handler returns to (the faulting frames cannot be resumed).
static sigjmp_buf strain_compare_return;
static volatile sig_atomic_t strain_compare_overflowing;

static void strain_compare_handler(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    (void)info;
    strain_walk_comparison *out = strain_compare_out;
    uint64_t started = strain_monotonic_ns();
    long step = 0;
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip = 0;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
            if ((size_t)step < strain_compare_capacity) strain_compare_step[step] = (uintptr_t)ip;
            step++;
        } while (unw_step(&cursor) > 0);
    }
    uint64_t stepped = strain_monotonic_ns();
    int fast = unw_backtrace((void **)strain_compare_fast, (int)strain_compare_capacity);
    uint64_t traced = strain_monotonic_ns();
    out->step_frames = step;
    out->fast_frames = fast;
    out->step_ns = stepped - started;
    out->fast_ns = traced - stepped;

    // The fast trace starts in this handler: find the interrupted frame in it.
    long skipped = -1;
    for (long i = 0; i < fast && step > 0; i++) {
        if (strain_compare_fast[i] == strain_compare_step[0]) { skipped = i; break; }
    }
    out->fast_skipped = skipped;
    out->first_mismatch = -1;
    out->compared = 0;
    if (skipped < 0) {
        out->first_mismatch = 0;
        return;
    }
    long kept = step < (long)strain_compare_capacity ? step : (long)strain_compare_capacity;
    long available = fast - skipped;
    long count = kept < available ? kept : available;
    for (long i = 0; i < count; i++) {
        if (strain_compare_step[i] != strain_compare_fast[skipped + i]) { out->first_mismatch = i; break; }
    }
    out->compared = count;
    if (out->first_mismatch < 0 && kept != available) out->first_mismatch = count;
    if (strain_compare_overflowing) siglongjmp(strain_compare_return, 1);
}

// Recursion without end: the stack's guard page ends it with a SIGSEGV.
__attribute__((noinline)) static long strain_compare_overflow(long level) {
    volatile char frame[64];
    frame[0] = (char)level;
    return strain_compare_overflow(level + 1) + frame[0];
}

// One level of recursion with a frame of its own; noinline so each level is a frame.
__attribute__((noinline)) static long strain_compare_descend(long level) {
    volatile char frame[64];
    frame[0] = (char)level;
    if (level <= 0) {
        raise(SIGUSR2);
        return frame[0];
    }
    long below = strain_compare_descend(level - 1);
    return below + frame[0];
}

int strain_walk_compare(long depth, size_t capacity, strain_walk_comparison *out) {
    if (out == NULL || capacity == 0) return EINVAL;
    memset(out, 0, sizeof(*out));
    strain_compare_step = calloc(capacity, sizeof(uintptr_t));
    strain_compare_fast = calloc(capacity, sizeof(uintptr_t));
    if (strain_compare_step == NULL || strain_compare_fast == NULL) {
        free(strain_compare_step);
        free(strain_compare_fast);
        return ENOMEM;
    }
    strain_compare_capacity = capacity;
    strain_compare_out = out;

    // The handler runs on an alternate stack, as the fault handler does.
    int status = strain_thread_prepare();
    struct sigaction action, previous;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = strain_compare_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    // depth < 0: overflow the calling thread's stack for real (SIGSEGV at the
    // guard page) and come back from the handler with siglongjmp.
    const int signal_number = depth < 0 ? SIGSEGV : SIGUSR2;
    strain_compare_overflowing = depth < 0;
    if (status == 0 && sigaction(signal_number, &action, &previous) != 0) status = errno;
    if (status == 0) {
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, signal_number);
        pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
        if (depth < 0) {
            if (sigsetjmp(strain_compare_return, 1) == 0) (void)strain_compare_overflow(0);
        } else {
            (void)strain_compare_descend(depth);
        }
        sigaction(signal_number, &previous, NULL);
    }
    strain_compare_overflowing = 0;
    free(strain_compare_step);
    free(strain_compare_fast);
    strain_compare_step = NULL;
    strain_compare_fast = NULL;
    return status;
}

#pragma clang attribute pop
