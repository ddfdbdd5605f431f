// CStrainProbe: the part of Strain that must run inside a signal handler.
//
// Everything the fault handler calls is async-signal-safe: no malloc, no locks,
// no stdio; it writes its record with write(2) into buffers allocated before any
// fault. The rest of this header (thread preparation, stack measurement) runs in
// ordinary code, on the thread it describes.
#ifndef STRAIN_PROBE_H
#define STRAIN_PROBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The stack of one thread, as pthread_getattr_np reports it.
typedef struct {
    /// Lowest usable address; the guard region lies just below it.
    uintptr_t low;
    /// One past the highest address of the stack.
    uintptr_t high;
    /// Size of the guard region below `low` (0 when the thread has none).
    size_t guard_size;
} strain_stack_bounds;

/// Installs the fault handler for SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT and
/// SIGFPE, process-wide, writing fault records to `record_fd`.
///
/// Allocates the frame buffer (`max_frames` instruction pointers) up front so the
/// handler never allocates. Also ignores SIGPIPE, so a parent that went away makes
/// writes fail instead of killing the child silently. Returns 0 or an errno value.
int strain_probe_install(int record_fd, size_t max_frames);

/// Gives the calling thread an alternate signal stack and records its stack
/// bounds; cheap and idempotent (a thread-local check after the first call).
///
/// - Important: a thread that runs without an alternate stack dies silently when
///   it overflows, because the handler has no stack to run on. Call this at the
///   start of every piece of scenario work, on the thread that runs it.
/// Returns 0 or an errno value.
int strain_thread_prepare(void);

/// The calling thread's stack bounds; 0 on success, an errno value otherwise.
int strain_thread_bounds(strain_stack_bounds *out);

/// Discards the pages of the calling thread's stack below its current stack
/// pointer, so a later `strain_thread_stack_high_water` counts only what this
/// work touches (glibc may hand a thread a cached stack touched before).
void strain_thread_reset_high_water(void);

/// Bytes of the calling thread's stack that are resident, measured from the top
/// down to the lowest resident page (mincore): the deepest the stack has been
/// since the last reset.
size_t strain_thread_stack_high_water(void);

/// Records the recursion depth a scenario has reached, so the fault record can
/// carry it if the thread overflows. A plain store: cheap enough for every frame.
void strain_mark_depth(long depth);

/// Adds one to the marked depth (entering a recursive call) and returns it.
long strain_depth_enter(void);

/// Takes one from the marked depth (leaving a recursive call).
void strain_depth_leave(void);

/// The last depth marked.
long strain_marked_depth(void);

/// The deepest depth marked since the process started.
long strain_deepest_marked_depth(void);

/// Sets the stack size glibc gives threads created with default attributes (GCD's
/// workers, `Thread`s without a `stackSize`), and the main thread's stack limit
/// (RLIMIT_STACK) when `main_stack_bytes` is not 0. Call before any thread starts.
/// Returns 0 or an errno value.
int strain_set_stack_profile(size_t thread_stack_bytes, size_t main_stack_bytes);

/// Threads in this process now (the `Threads:` line of /proc/self/status), or -1.
int strain_thread_count(void);

/// The kernel's id for the calling thread (gettid).
int strain_thread_id(void);

/// CLOCK_MONOTONIC in nanoseconds (async-signal-safe).
uint64_t strain_monotonic_ns(void);

/// Size of the process' frame buffer set by `strain_probe_install` (0 before).
size_t strain_probe_frame_capacity(void);

/// Writes a null pointer dereference: a real SIGSEGV away from any stack.
void strain_crash_null_dereference(void);

/// Demangles a Swift symbol with the runtime's own demangler; returns a malloc'd
/// string the caller frees, or NULL when `name` is not a Swift symbol.
char *strain_demangle_swift(const char *name);

/// Demangles an Itanium C++ symbol; returns a malloc'd string or NULL.
char *strain_demangle_cxx(const char *name);

#ifdef __cplusplus
}
#endif

#endif
