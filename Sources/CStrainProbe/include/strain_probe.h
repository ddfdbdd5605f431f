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
#include <signal.h>

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

/// A real SIGBUS: a write to a shared mapping whose file was truncated under it.
void strain_crash_bus_error(void);
/// A real SIGFPE: an integer division by zero in C (returns only if it did not trap).
int strain_crash_divide_by_zero(int numerator);
/// libstdc++'s std::terminate(): a C++-style abort with its message on stderr.
void strain_crash_cxx_terminate(void);

/// Demangles a Swift symbol with the runtime's own demangler; returns a malloc'd
/// string the caller frees, or NULL when `name` is not a Swift symbol.
char *strain_demangle_swift(const char *name);

/// Demangles an Itanium C++ symbol; returns a malloc'd string or NULL.
char *strain_demangle_cxx(const char *name);

// MARK: - Lifetimes: the runner's stop signals, the child's tie to its runner (strain_lifecycle.c)

/// The signal a child asks to get when its runner dies (PR_SET_PDEATHSIG).
#define STRAIN_PARENT_DEATH_SIGNAL (SIGRTMAX)

/// The runner's side: SIGINT and SIGTERM only set a flag the supervisor polls
/// (a second one ends the runner at once); SIGPIPE is ignored. Returns 0 or errno.
int strain_runner_catch_stop_signals(void);
/// The first stop signal caught (SIGINT or SIGTERM), 0 while none has been.
int strain_runner_stop_signal(void);
/// Sets the stop flag as if `signal_number` had arrived (tests).
void strain_runner_request_stop(int signal_number);

/// The child's side: when the runner dies, the kernel sends
/// `STRAIN_PARENT_DEATH_SIGNAL`, whose handler kills the child's process group
/// (the child and the grandchildren in it). Checks that the parent is still
/// `expected_parent`, and kills the group at once if it is not.
///
/// - Important: the kernel sends the parent-death signal when the *thread* that
///   spawned the child exits, so the runner spawns trials from one long-lived thread.
/// Returns 0 or an errno value.
int strain_child_bind_to_parent(int expected_parent);

/// Makes the calling process the child subreaper of its descendants
/// (PR_SET_CHILD_SUBREAPER). Returns 0 or an errno.
int strain_runner_become_subreaper(void);

/// A pipe whose both ends are close-on-exec from the moment they exist (pipe2),
/// so a spawn on another thread never inherits them. Returns 0 or an errno value.
int strain_pipe_cloexec(int ends[2]);

// MARK: - Heartbeat, scenario work, thread dumps (strain_watch.c)

/// Units of scenario work, as the scenario reports them, and the time of the
/// last report. Pending work is `queued - finished`; work waiting for a thread
/// is `queued - started`.
typedef struct {
    long queued;
    long started;
    long finished;
    long beats;
    uint64_t last_event_ns;
} strain_heartbeat;

/// Lock-free counters, cheap enough to call per unit of work.
void strain_heartbeat_queued(long units);
void strain_heartbeat_started(long units);
void strain_heartbeat_finished(long units);
/// Progress inside a long unit.
void strain_heartbeat_beat(void);
strain_heartbeat strain_heartbeat_read(void);

/// The parent's side of a shared heartbeat: a 4 KiB memfd the child maps
/// (`strain_heartbeat_share`) and the parent reads at the child's deadline.
/// Returns the fd (close-on-exec) or -errno.
int strain_heartbeat_create_shared(void);
/// Maps a shared heartbeat; NULL on failure.
void *strain_heartbeat_map(int fd);
void strain_heartbeat_unmap(void *block);
strain_heartbeat strain_heartbeat_read_mapped(const void *block);
/// The child's side: from now on the heartbeat lives in the shared block.
/// Call before any work reports progress. Returns 0 or an errno value.
int strain_heartbeat_share(int fd);

/// Marks the calling thread as running scenario work (nestable); a dump says so.
void strain_work_enter(void);
void strain_work_leave(void);
int strain_in_work(void);
/// Writes the ids of the threads running scenario work now into `tids`; returns how many.
size_t strain_threads_in_work(int *tids, size_t capacity);

/// Claims the result descriptor for the caller: the fault handler and the
/// trial's normal end both claim it first, so only one of them ever writes a
/// record. Returns 1 for the first caller, 0 for every later one.
int strain_claim_result(void);

/// Names the calling thread for the kernel (/proc, dumps); cut to 15 characters.
int strain_set_thread_name(const char *name);

/// One thread's answer to a dump request.
typedef struct {
    int tid;
    int in_work;
    int frame_count;
    long frames_total;
    const uintptr_t *frames;
    uint64_t answered_ns;
} strain_dump_thread;

/// Allocates the dump's slots before any stall (`max_threads` threads of
/// `frames_per_thread` frames each). Returns 0 or an errno value.
int strain_dump_install(size_t max_threads, size_t frames_per_thread);

/// Asks each thread in `tids` to walk its own stack into slot i (its index in
/// `tids`) and waits until all answered or `timeout_ns` passed. Returns how many
/// answered. Requires `strain_probe_install` (its handler answers the requests).
int strain_dump_threads(const int *tids, size_t count, uint64_t timeout_ns);

/// Slot `index` of the last dump: 1 when that thread answered, 0 when it did
/// not, -1 when it had ended before it was asked.
int strain_dump_slot_read(size_t index, strain_dump_thread *out);

/// The reference for measuring locks: nanoseconds per uncontended
/// pthread_mutex_lock/unlock pair over `iterations` pairs, in a tight C loop.
double strain_reference_mutex_ns(long iterations);

// MARK: - The calling thread's stack (strain_stack.c)

/// Walks the calling thread's own stack into `ips` (at most `max_frames`
/// instruction pointers, innermost first) and returns how many it wrote. For
/// ordinary code, not signal handlers: a confinement violation's stacks.
size_t strain_capture_stack(uintptr_t *ips, size_t max_frames);

/// The owner (a confinement token) the calling thread is running for: set by
/// `OwningQueue.sync`/`async` around their blocks, read by every checked access.
/// Inline, so an access that is fine costs one thread-local load.
extern _Thread_local uintptr_t strain_confinement_owner __attribute__((tls_model("initial-exec")));

static inline uintptr_t strain_confinement_current(void) { return strain_confinement_owner; }

/// Sets the calling thread's owner and returns the one it replaces.
static inline uintptr_t strain_confinement_swap(uintptr_t owner) {
    uintptr_t previous = strain_confinement_owner;
    strain_confinement_owner = owner;
    return previous;
}

/// The calling thread's kernel id, cached in a thread-local after the first call.
int strain_thread_id_cached(void);

// MARK: - Remote unwinding (strain_ptrace.c; used by the parent)

/// Unwinds thread `tid` of a child this process may ptrace, from outside, with
/// ptrace and libunwind-ptrace: attaches without stopping the others, walks up
/// to `max_frames` instruction pointers into `ips`, detaches, leaving the thread
/// blocked where it was. Returns the number of frames (>= 0) or -errno. `state`
/// (may be NULL) receives the thread's state letter from /proc before attaching.
long strain_ptrace_unwind(int tid, uintptr_t *ips, size_t max_frames, char *state);

#ifdef __cplusplus
}
#endif

#endif
