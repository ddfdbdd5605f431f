// The fault handler's walk (strain_walk_interrupted) against the unw_step loop it
// falls back to, on the same real fault, in one handler (strain_fault_walk_check.c):
// what the tests check the fast walk with.
#ifndef STRAIN_FAULT_WALK_CHECK_H
#define STRAIN_FAULT_WALK_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the handler's walk and the unw_step loop found on one fault.
typedef struct {
    /// 0, or the errno of warming the thread for the fast walk.
    int warm_status;
    /// Whether the thread that faulted is the process's main thread.
    int on_main_thread;
    /// The handler's walk: 1 when the fast trace made it; why not otherwise.
    int fast;
    char fallback[32];
    /// Frames each walk counted, kept in the head, kept in the tail.
    long walk_total, step_total;
    long walk_head, step_head;
    long walk_tail, step_tail;
    /// The last unw_step answer and the first and last frames' stack pointers, each walk.
    int walk_end, step_end;
    uintptr_t walk_first_sp, step_first_sp;
    uintptr_t walk_last_sp, step_last_sp;
    /// Index of the first kept frame where the two differ; -1 when every one agrees.
    long first_mismatch;
    /// Each walk's time, in nanoseconds.
    uint64_t walk_ns, step_ns;
} strain_fault_walk_check_result;

/// Overflows the calling thread's stack for real (SIGSEGV at its guard page), and in
/// the handler, on the alternate stack, walks the interrupted stack as the fault
/// handler does (`strain_walk_interrupted`, fast walk at most `fast_limit` frames
/// when not 0) and then with the unw_step loop alone, each keeping `capacity` frames
/// (half head, half tail), and compares them. Warms the thread and reserves the fast
/// walk's buffer first, as a trial does. Returns from the handler with siglongjmp.
/// Returns 0 or an errno value. Not async-signal-safe to call: it allocates and
/// installs a SIGSEGV handler, then restores the old one.
int strain_fault_walk_check(size_t capacity, size_t fast_limit, strain_fault_walk_check_result *out);

#ifdef __cplusplus
}
#endif

#endif
