// Two walks of one stack from a signal handler: libunwind's cached fast trace
// against the unw_step loop (strain_walk_compare.c). A measurement only; the fault
// handler's own walk is strain_walk_interrupted (strain_fault_walk.c).
#ifndef STRAIN_WALK_COMPARE_H
#define STRAIN_WALK_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the two walks of one stack found.
typedef struct {
    /// Frames the unw_step loop found from the signal context (the fault handler's walk).
    long step_frames;
    /// Frames unw_backtrace found in all, from the handler's own frame.
    long fast_frames;
    /// Frames of unw_backtrace's walk before the interrupted frame (the handler's and the signal trampoline's).
    long fast_skipped;
    /// Frames compared one by one, from the interrupted frame.
    long compared;
    /// Index of the first frame where the walks differ, -1 when they agree on every compared frame.
    long first_mismatch;
    /// Each walk's time, in nanoseconds.
    uint64_t step_ns;
    uint64_t fast_ns;
} strain_walk_comparison;

/// Recurses `depth` levels on the calling thread, raises a signal handled on an
/// alternate stack, and walks the interrupted stack both ways into buffers of
/// `capacity` frames. A negative `depth` recurses until the thread's stack
/// overflows for real (SIGSEGV at its guard page) and returns from the handler
/// with siglongjmp. Returns 0 or an errno value. Not async-signal-safe to call:
/// it allocates, installs a handler for SIGUSR2 (or SIGSEGV) and restores the old one.
int strain_walk_compare(long depth, size_t capacity, strain_walk_comparison *out);

#ifdef __cplusplus
}
#endif

#endif
