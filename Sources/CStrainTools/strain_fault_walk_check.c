// The fault handler's walk against the unw_step loop on one real overflow: the two
// walks of strain_fault_walk.c, called from a SIGSEGV handler on the alternate stack
// exactly as the fault handler calls them, and compared frame by frame.
#include "strain_fault_walk_check.h"
#include "strain_probe.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uintptr_t *strain_check_walk_frames;
static uintptr_t *strain_check_step_frames;
static size_t strain_check_capacity;
static size_t strain_check_fast_limit;
static strain_fault_walk_check_result *strain_check_out;
static sigjmp_buf strain_check_return;

static void strain_check_handler(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    (void)info;
    strain_fault_walk_check_result *out = strain_check_out;
    strain_fault_walk walk, step;
    uint64_t started = strain_monotonic_ns();
    strain_walk_interrupted(context, strain_check_walk_frames, strain_check_capacity, strain_check_fast_limit, &walk);
    uint64_t walked = strain_monotonic_ns();
    strain_probe_prefer_step_walk(1);
    strain_walk_interrupted(context, strain_check_step_frames, strain_check_capacity, 0, &step);
    strain_probe_prefer_step_walk(0);
    uint64_t stepped = strain_monotonic_ns();

    out->on_main_thread = syscall(SYS_gettid) == getpid();
    out->fast = walk.fast;
    if (walk.fallback != NULL) strncpy(out->fallback, walk.fallback, sizeof(out->fallback) - 1);
    out->walk_total = (long)walk.total;
    out->step_total = (long)step.total;
    out->walk_head = (long)walk.head_count;
    out->step_head = (long)step.head_count;
    out->walk_tail = (long)walk.tail_count;
    out->step_tail = (long)step.tail_count;
    out->walk_end = walk.walk_end;
    out->step_end = step.walk_end;
    out->walk_first_sp = walk.first_sp;
    out->step_first_sp = step.first_sp;
    out->walk_last_sp = walk.last_sp;
    out->step_last_sp = step.last_sp;
    out->walk_ns = walked - started;
    out->step_ns = stepped - walked;
    out->first_mismatch = -1;
    size_t kept = step.head_count + step.tail_count;
    size_t walk_kept = walk.head_count + walk.tail_count;
    for (size_t i = 0; i < kept || i < walk_kept; i++) {
        if (i >= kept || i >= walk_kept || strain_fault_walk_frame(&walk, i) != strain_fault_walk_frame(&step, i)) {
            out->first_mismatch = (long)i;
            break;
        }
    }
    siglongjmp(strain_check_return, 1);
}

// Recursion without end: the stack's guard page ends it with a SIGSEGV.
__attribute__((noinline)) static long strain_check_overflow(long level) {
    volatile char frame[64];
    frame[0] = (char)level;
    return strain_check_overflow(level + 1) + frame[0];
}

int strain_fault_walk_check(size_t capacity, size_t fast_limit, strain_fault_walk_check_result *out) {
    if (out == NULL || capacity < 2) return EINVAL;
    memset(out, 0, sizeof(*out));
    int status = strain_thread_prepare();
    if (status != 0) return status;
    strain_stack_bounds bounds;
    if ((status = strain_thread_bounds(&bounds)) != 0) return status;
    if ((status = strain_probe_reserve_fast_walk(bounds.high - bounds.low)) != 0) return status;
    out->warm_status = strain_thread_warm_fast_walk();
    strain_check_walk_frames = calloc(capacity, sizeof(uintptr_t));
    strain_check_step_frames = calloc(capacity, sizeof(uintptr_t));
    if (strain_check_walk_frames == NULL || strain_check_step_frames == NULL) {
        free(strain_check_walk_frames);
        free(strain_check_step_frames);
        return ENOMEM;
    }
    strain_check_capacity = capacity;
    strain_check_fast_limit = fast_limit;
    strain_check_out = out;

    struct sigaction action, previous;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = strain_check_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, &action, &previous) != 0) status = errno;
    if (status == 0) {
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, SIGSEGV);
        pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
        if (sigsetjmp(strain_check_return, 1) == 0) (void)strain_check_overflow(0);
        sigaction(SIGSEGV, &previous, NULL);
    }
    free(strain_check_walk_frames);
    free(strain_check_step_frames);
    strain_check_walk_frames = NULL;
    strain_check_step_frames = NULL;
    return status;
}

#pragma clang attribute pop
