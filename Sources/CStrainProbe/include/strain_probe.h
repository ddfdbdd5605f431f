// CStrainProbe: the part of Strain that runs inside the process under test and
// must be safe inside a signal handler. Linked into `strain` (its trials) and,
// with the preload's interposers, built as libStrainProbe.so for `strain exec`:
// one probe for both. It depends on libc and libunwind only (no Swift runtime,
// no libstdc++); parent-only C lives in CStrainTools.
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

// Hidden: inside libStrainProbe.so these names must not interpose on (or be
// interposed by) a program that has its own copy, such as a `strain` binary run
// under `strain exec`. Static linking into `strain` is unaffected.
#pragma GCC visibility push(hidden)

/// The stack of one thread, as pthread_getattr_np reports it.
typedef struct {
    /// Lowest usable address; the guard region lies just below it.
    uintptr_t low;
    /// One past the highest address of the stack.
    uintptr_t high;
    /// Size of the guard region below `low` (0 when the thread has none).
    size_t guard_size;
} strain_stack_bounds;

/// Installs the fault handler for SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT,
/// SIGFPE and SIGSYS, process-wide, writing fault records to `record_fd` (or, after
/// `strain_probe_record_to_directory`, to a file; pass -1 then).
///
/// Allocates the frame buffer (`max_frames` instruction pointers) up front so the
/// handler never allocates. After recording a fault the handler restores the
/// disposition it replaced (the program's handler, or the default) and passes the
/// signal on, so the process ends as it would have without the probe. With a
/// record descriptor (a trial) it also ignores SIGPIPE, so a parent that went
/// away makes writes fail instead of killing the child silently. Callable again
/// after a fork (a trial server's child). Returns 0 or an errno value.
int strain_probe_install(int record_fd, size_t max_frames);

/// Gives the calling thread an alternate signal stack and records its stack
/// bounds; cheap and idempotent (a thread-local check after the first call).
///
/// - Important: a thread that runs without an alternate stack dies silently when
///   it overflows, because the handler has no stack to run on. Call this at the
///   start of every piece of scenario work, on the thread that runs it.
/// Returns 0 or an errno value.
int strain_thread_prepare(void);

/// The alternate signal stack alone, without the bounds (pthread_getattr_np,
/// about 0.6 µs): what the preload gives every new thread. A fault on such a
/// thread finds its stack's bounds in /proc/self/maps instead. Returns 0 or an
/// errno value.
int strain_thread_prepare_alternate_stack(void);

/// Maps `count` alternate stacks into the cache the next threads take theirs from
/// (a trial server does, so each copy's first threads find theirs mapped).
void strain_thread_prefill_alternate_stacks(int count);

/// Unmaps the cached alternate stacks (before a memory limit, whose address-space
/// count they are part of).
void strain_thread_drain_alternate_stacks(void);

/// Bytes at the top of a reserved alternate stack that carry a message from the
/// thread that reserved it to the thread that installs it.
#define STRAIN_RESERVED_SCRATCH 64

/// The preload's way to cover a new thread with no malloc (a free on a new
/// thread makes glibc set up its per-thread cache and arena first): the creating
/// thread reserves an alternate stack, passes it to the new thread with its
/// start routine written into the scratch bytes at its top, and the new thread
/// installs it before it runs anything else. NULL when no memory is left.
void *strain_thread_reserve_alternate_stack(void);

/// Gives back a reserved stack that no thread installed (pthread_create failed).
void strain_thread_unreserve_alternate_stack(void *reserved);

/// The STRAIN_RESERVED_SCRATCH bytes of a reserved stack, free until it is installed.
void *strain_thread_reserved_scratch(void *reserved);

/// Installs a reserved stack as the calling thread's alternate signal stack
/// (read the scratch bytes first); it is given back if the thread has one
/// already or the call fails. Returns 0 or an errno value.
int strain_thread_install_reserved_alternate_stack(void *reserved);

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

/// Makes the calling thread's records read as a thread of `size` bytes: its top,
/// as its records and high water count from, becomes its lowest address plus
/// `size` (a trial thread started larger, to leave a test's closure the room a
/// plain thread of `size` leaves its closure). 0 or an errno value.
int strain_thread_report_size(size_t size);

/// Where a frame is on its thread's stack.
typedef struct {
    size_t used;  // bytes from the stack's top (as its bounds report it) to the frame
    size_t room;  // bytes left below the frame
    size_t size;  // the stack's size
} strain_stack_place;

/// Where this call's frame is on the calling thread's stack: on a prepared thread
/// from its bounds, allocating nothing; on any other from pthread_getattr_np, which
/// allocates. 0 where the bounds could not be read, or the frame is above the top
/// a thread reports (`strain_thread_report_size`).
void strain_stack_measure(strain_stack_place *out);

/// `strain_stack_measure` into the process's one note, for `strain_stack_noted` to
/// read: a closure with no arguments can measure (one note at a time in a process).
void strain_stack_note(void);

/// The last `strain_stack_note`'s figures.
void strain_stack_noted(size_t *used, size_t *room, size_t *size);

/// Calls `function(context)` with `bytes` of the stack (rounded down to 16) set
/// aside first, untouched: what the call leaves below itself is `bytes` less.
void strain_call_below(size_t bytes, void (*function)(void *), void *context);

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

/// Reads the file at `path` (a small /proc file) into `text`, at most `capacity - 1`
/// bytes, NUL-terminated: its length, or -1. Async-signal-safe.
long strain_read_proc_text(const char *path, char *text, size_t capacity);

/// The signal mask on line `name` (`"\nSigBlk:"`, `"\nSigPnd:"`) of /proc status
/// `text`, bit N-1 for signal N; 0 when it cannot be read. Async-signal-safe.
unsigned long long strain_status_mask(const char *text, const char *name);

/// The kernel's id for the calling thread (gettid).
int strain_thread_id(void);

/// CLOCK_MONOTONIC in nanoseconds (async-signal-safe).
uint64_t strain_monotonic_ns(void);

/// Size of the process' frame buffer set by `strain_probe_install` (0 before).
size_t strain_probe_frame_capacity(void);

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
/// Notes, once per thread, that the calling libdispatch worker serves the overcommit root
/// queue of `qos` (0 maintenance, 1 background, 2 utility, 3 default, 4 user-initiated,
/// 5 user-interactive): Strain's work runs there from a private serial queue with no
/// target, which libdispatch on Linux drains only on that root queue's threads. The
/// kernel keeps 15 characters of a thread's name, `-qos.overcommit` for all six; dumps
/// then name the worker by the whole label. Forgotten when the thread exits.
void strain_work_note_overcommit_root(int qos);
/// The root queue label noted for thread `tid`, or NULL. Async-signal-safe.
const char *strain_work_root_queue(int tid);

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

/// Queues `signal_number` carrying `value` (si_value) to thread `tid` of process `pid`
/// (rt_tgsigqueueinfo). Returns 0 or an errno value. Async-signal-safe.
int strain_tgsigqueue(int pid, int tid, int signal_number, uintptr_t value);

/// Slot `index` of the last dump: 1 when that thread answered, 0 when it did
/// not, -1 when it had ended before it was asked.
int strain_dump_slot_read(size_t index, strain_dump_thread *out);

// MARK: - The fault handler's walk (strain_fault_walk.c)

/// Reserves the buffer the fault handler's fast walk (libunwind's cached
/// `unw_backtrace`) fills: room for a stack of `deepest_stack_bytes`, or of the
/// main thread's limit or the default thread stack when either is larger (at 16
/// bytes a frame; capped at 64 MiB of stack), mapped up front and touched only as
/// deep as a walk goes. Ordinary code, before any fault. Returns 0 or an errno
/// value; without the buffer every fault is walked with `unw_step`.
int strain_probe_reserve_fast_walk(size_t deepest_stack_bytes);

/// Frames the fast walk's buffer holds (0 before `strain_probe_reserve_fast_walk`).
size_t strain_probe_fast_walk_capacity(void);

/// Makes the handler walk with the `unw_step` loop even on warmed threads (1), or
/// with the fast walk where it can (0, the default): for measuring the two side by side.
void strain_probe_prefer_step_walk(int prefer);

/// Warms the fast walk on the calling thread, in ordinary code: sets up libunwind's
/// per-thread cache (its first use is not async-signal-safe) and learns, from this
/// thread's own `unw_step` walk, the outermost frame every walk of it ends on. Only
/// a warmed thread's faults are walked fast. Cheap after the first call (a
/// thread-local check); the first costs a walk of the current stack and libunwind's
/// 256 KiB cache. Returns 0, or an errno value when the two walks disagree here
/// (the thread's faults are then walked with `unw_step`).
int strain_thread_warm_fast_walk(void);

/// Starts libunwind in a process that will be copied (the trial server), with its
/// low descriptors taken, and notes the pipe libunwind opens (its memory validation
/// keeps the pipe's two numbers for good): above what a copy keeps and opens first.
/// Ordinary code, single-threaded, before any other use of libunwind. Returns 0 or
/// an errno value.
int strain_probe_start_unwinder(void);

/// In a copy, right after it closed the descriptors it does not keep: a pipe of its
/// own at the numbers libunwind noted in `strain_probe_start_unwinder`, so its
/// validation never reads or writes a descriptor the copy opens later (which makes
/// every walk stop after its first frame). Returns 0 or an errno value.
int strain_probe_renew_unwinder_pipe(void);

/// Whether the calling thread's faults may be walked fast.
int strain_thread_fast_walk_is_warm(void);

/// One walk of an interrupted stack: the innermost frames (the head) as walked, the
/// outermost (the tail) kept in a ring, and how many there were in all.
typedef struct {
    /// Frames walked, kept or not.
    size_t total;
    /// The interrupted frame's stack pointer, and the last frame's.
    uintptr_t first_sp;
    uintptr_t last_sp;
    /// The last `unw_step` answer: 0 at the outermost frame, negative where it could not go on.
    int walk_end;
    /// 1 when libunwind's cached fast trace made the walk, 0 for the `unw_step` loop.
    int fast;
    /// Why the fast trace did not make the walk; NULL when it did.
    const char *fallback;
    const uintptr_t *head;
    size_t head_count;
    const uintptr_t *tail_ring;
    size_t tail_ring_capacity;
    size_t tail_first_slot;
    size_t tail_count;
} strain_fault_walk;

/// Walks the stack a signal interrupted (`context`, the handler's third argument),
/// in the handler: the fast trace on a warmed thread, into the reserved buffer
/// (at most `fast_limit` frames of it when not 0); otherwise, or when it filled the
/// buffer, missed the signal frame or ended short of the thread's outermost frame,
/// the `unw_step` loop into `frames` (`capacity` frames: half head, half tail ring),
/// and `out->fallback` says why. Either way the head holds the first `capacity / 2`
/// frames and the tail the last `capacity - capacity / 2`. Async-signal-safe.
void strain_walk_interrupted(void *context, uintptr_t *frames, size_t capacity, size_t fast_limit, strain_fault_walk *out);

/// Frame `index` of a walk's kept frames, in call order from the fault: the head,
/// then the tail from its oldest frame; `index` below `head_count + tail_count`.
uintptr_t strain_fault_walk_frame(const strain_fault_walk *walk, size_t index);

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

// MARK: - Outside a trial: any program under `strain exec` (libStrainProbe.so)

/// Writes fault records and thread dumps as files in `directory`
/// (`fault-PID.txt`, `dump-PID-N.txt`) instead of to the record descriptor, so
/// nothing reaches the program's own stdout or stderr. The path is copied; files
/// are named by the pid at the moment they are written (a forked child has its
/// own). Only that folder is ever written: its device and inode are taken here (a
/// link is refused), and a record is not written once the folder was deleted or
/// replaced. Returns 0, ENAMETOOLONG, ENOTDIR or lstat(2)'s errno.
int strain_probe_record_to_directory(const char *directory);

/// Opens `name` in the record folder with `flags` (O_NOFOLLOW and O_CLOEXEC added,
/// mode 0644), through a descriptor of the folder checked to be the one given to
/// strain_probe_record_to_directory. With O_TRUNC the file is made anew: what was
/// under the name (a link the program planted) is removed first, not written
/// through. -1 when there is no such folder any more (deleted or replaced) or
/// openat(2) fails. Async-signal-safe and vfork-safe.
int strain_probe_record_open(const char *name, int flags);

/// The name of this process's record `stem` PID `extension` (`handlers-4242.txt`) in
/// `out`; 0 when it does not fit or there is no record folder. Async-signal-safe.
int strain_probe_record_name(char *out, size_t capacity, const char *stem, const char *extension);

/// The sigaction(2) the probe installs and restores handlers with. The preload
/// interposes `sigaction` itself, so it hands the probe libc's.
typedef int (*strain_sigaction_function)(int, const struct sigaction *, struct sigaction *);
void strain_probe_use_sigaction(strain_sigaction_function function);

/// Whether the probe's handler is installed for `signal_number`: then the
/// program's own disposition is kept aside (`strain_probe_program_action`) and
/// the signal passed on to it after the probe recorded what it needs.
int strain_probe_owns_signal(int signal_number);

/// For a signal the probe owns: reads the program's disposition into `old` and
/// sets it from `action` (either may be NULL). What `sigaction` returns to a
/// program under `strain exec`, and what the probe restores before passing a
/// fault on.
void strain_probe_program_action(int signal_number, const struct sigaction *action, struct sigaction *old);

/// Makes `signal_number` (SIGQUIT) ask for a thread dump: the thread that gets it
/// has every thread walk its own stack and writes `dump-PID-N.txt` into the record
/// directory; the program goes on. Returns 0 or an errno value.
int strain_probe_answer_dumps_on(int signal_number);

/// Gives the dump signal back to a program that installs its own disposition for
/// it: `action` is installed for real and dumps are then asked only with SIGSYS
/// carrying `STRAIN_DUMP_REQUEST_VALUE`. Creates `sigquit-PID` in the record
/// directory so `strain dump` knows (`signal_number` 0: only that, for a SIGQUIT
/// that was never the probe's). Returns 0 or an errno value.
int strain_probe_release_dump_signal(int signal_number, const struct sigaction *action);

/// The dump signal, 0 once the program took it back.
int strain_probe_dump_signal(void);

/// The value a SIGSYS sent with sigqueue(3) carries to ask a probed process for
/// a thread dump (`strain dump` uses it when SIGQUIT is the program's).
#define STRAIN_DUMP_REQUEST_VALUE 0x57A1D00D

/// Gives back the calling thread's alternate signal stack (at thread exit). The
/// thread must not take a fault on that stack afterwards.
void strain_thread_release(void);

// MARK: - Allocation counting (strain_alloc.c)

/// What the malloc family counted since `strain_alloc_begin`, summed over threads.
typedef struct {
    /// Calls of malloc, calloc, realloc (a new block), posix_memalign, aligned_alloc, memalign.
    uint64_t allocations;
    /// Bytes those calls asked for.
    uint64_t bytes;
    /// Calls of free with a block, and realloc's of an old block.
    uint64_t frees;
    /// Allocations whose call site found no room in the site table (counted above all the same).
    uint64_t unplaced;
} strain_alloc_totals;

/// One call site: the first return address outside the Swift runtime and Foundation.
typedef struct {
    uintptr_t address;
    uint64_t allocations;
    uint64_t bytes;
} strain_alloc_site_count;

/// Zeroes the counters and starts counting every allocation in the process
/// (by call site too when `by_site` is not 0). Ordinary code: call it right
/// before the measured work.
///
/// - Important: `strain` and any binary that links this target define malloc,
///   calloc, realloc, free, posix_memalign, aligned_alloc, memalign and (not
///   counted) malloc_usable_size, each
///   forwarding to the allocator the environment chose (an LD_PRELOAD one, else
///   glibc's); while counting is off each costs one predictable branch more than
///   that allocator's own.
void strain_alloc_begin(int by_site);

/// Stops counting; the counts stay readable until the next begin.
void strain_alloc_end(void);

/// Whether counting is on.
int strain_alloc_is_counting(void);

/// The calling thread's allocations are never counted (the harness's own threads:
/// the watchdog samples while the work runs, and its allocations are not the work's).
void strain_alloc_exclude_thread(void);

/// The totals counted so far.
strain_alloc_totals strain_alloc_read_totals(void);

/// Copies up to `capacity` site counts into `out` (one per thread slot and site,
/// not merged: the caller sums equal addresses); returns how many it wrote.
size_t strain_alloc_read_sites(strain_alloc_site_count *out, size_t capacity);

/// Writes the totals to `fd` (which it closes) as `allocations N`, `bytes N` and
/// `frees N` lines (`strain exec` reads them after the program ends). Returns 0 or
/// an errno value.
int strain_alloc_write_totals(int fd);

/// The loaded segment that holds the return address `address`, as a line of
/// /proc/self/maps would give it (`start-end r-xp offset 00:00 0 path`), into
/// `out`, from the loader's tables (reading /proc/self/maps costs a Swift process
/// a tenth of a millisecond and more). Returns its length, 0 when none holds it.
int strain_alloc_describe_mapping(uintptr_t address, char *out, size_t capacity);

/// Whether the process's malloc is this probe's (a program that defines its own
/// allocator in its executable takes precedence, and nothing would be counted).
int strain_alloc_is_interposing(void);

/// Where the malloc family forwards (strain_alloc.c: the next definition in lookup
/// order): the path of the library that defines it, as the loader names it (glibc's
/// libc.so.6, or an allocator from LD_PRELOAD), or "sanitizer". When that library
/// lacks members of the family, `*missing` (if not NULL) names them, comma separated,
/// and the family forwards to glibc's own instead; otherwise `*missing` is NULL.
const char *strain_alloc_forwarding(const char **missing);

// MARK: - Instructions counted by callgrind (strain_instr.c)

/// Whether this process runs under Valgrind (any tool); 0 where the probe was
/// built without Valgrind's headers.
int strain_instr_under_valgrind(void);

/// Starts callgrind's instrumentation at the start of the measured work, and the calling
/// (host) thread's collection; threads collect while they hold work (strain_work_enter).
/// The runner starts callgrind with instrumentation and collection off, or, for the
/// counted trial server, with the instrumentation on (`instrumented`: it is not
/// switched, and the translations the copy inherits are kept). No-op outside Valgrind.
void strain_instr_begin(int instrumented);

/// Writes callgrind's counts so far as the part triggered by `strain-work` and stops
/// the instrumentation (unless `instrumented` from the start): the part holds the
/// measured work alone. No-op outside Valgrind.
void strain_instr_end(int instrumented);

/// The calling thread's collection on while a count runs (work starts on it), off
/// again (its work ends): called by strain_work_enter and strain_work_leave at the
/// outermost level. One relaxed load outside a count.
void strain_instr_thread_on(void);
void strain_instr_thread_off(void);

/// 1 while a count runs (between strain_instr_begin and strain_instr_end, or
/// strain_perf_begin and strain_perf_end), else 0: async work then runs on an
/// executor that marks each of its jobs as work.
int strain_instr_counting(void);

// MARK: - Instructions counted by a perf counter (strain_instr.c)

/// 0 when a perf counter of `type`/`config` (perf_event_open: this thread, any CPU,
/// user space only) opens and reads here, else the errno (ENOENT: no such event,
/// as for hardware events on a VM without a PMU). Opens nothing that stays open.
int strain_perf_event_opens(uint32_t type, uint64_t config);

/// Starts a count by perf counters of `type`/`config`: from now each thread counts its
/// user space while it holds work (strain_work_enter, its counter opened once and
/// closed when it exits), and the calling (host) thread until strain_perf_end.
/// One event per process: a thread keeps the counter it opened first.
void strain_perf_begin(uint32_t type, uint64_t config);

/// Ends the count: `*total` is what the threads counted (in the event's unit). Returns 0,
/// or the errno of the first counter that could not be opened or read (the count is
/// then short, and must not be used), or EINVAL when no perf count ran.
int strain_perf_end(uint64_t *total);

/// Keeps `length` bytes the process wrote to its standard error at the end of a
/// fixed ring (the last `STRAIN_STDERR_TAIL_BYTES`), for the runner to read why a
/// program that said so itself died (a Rust panic, a JVM's uncaught exception, a
/// C program's fprintf before abort, libstdc++'s terminate message).
/// Async-signal-safe: one atomic add and a copy, no allocation, no lock; writers on
/// several threads at once may interleave their bytes, never lose the ring.
void strain_stderr_keep(const void *bytes, size_t length);

/// Forgets what was kept (a forked child starts a tail of its own).
void strain_stderr_forget(void);

/// Writes the kept tail, oldest byte first, to `stderr-PID.txt` in the record
/// directory (renamed into place whole); nothing when nothing was kept or there is
/// no record directory. Async-signal-safe: the fault handler calls it when it passes
/// a signal on to its default action, and the preload at an exit by a nonzero status.
void strain_stderr_write_tail(void);

/// Bytes of standard error the ring keeps: a JVM's uncaught StackOverflowError prints
/// its headline and then 1,024 `\tat` lines (25 KiB to over 100 KiB) after it.
#define STRAIN_STDERR_TAIL_BYTES (128 * 1024)

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
