// The watchdog's half in C: the heartbeat scenarios beat, the flag that marks a
// thread as running scenario work, and the all-thread dump.
//
// The dump signals each thread with SIGSYS, queued with a magic value so a real
// SIGSYS (seccomp) still reaches the fault handler. SIGSYS because libdispatch's
// workers (and so Swift concurrency's) block every asynchronous signal except
// SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS, SIGPIPE and SIGPROF.
// Each thread walks its own stack, from the signal's context, into a slot
// allocated before the stall, and raises its slot's flag; the rules of the fault
// handler hold here too (no malloc, no locks, no stdio).
#include "strain_probe.h"
#include "strain_internal.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// MARK: - Heartbeat

// The counters live in a block that the parent can share with the child
// (strain_heartbeat_share): then the parent can read the heartbeat of a child
// too wedged to report, at its deadline.
typedef struct {
    _Atomic long queued;
    _Atomic long started;
    _Atomic long finished;
    _Atomic long beats;
    _Atomic uint64_t last_event_ns;
} strain_heartbeat_block;

static strain_heartbeat_block strain_heartbeat_local;
static strain_heartbeat_block *strain_hb = &strain_heartbeat_local;

static inline void strain_touch(void) {
    atomic_store_explicit(&strain_hb->last_event_ns, strain_monotonic_ns(), memory_order_relaxed);
}

void strain_heartbeat_queued(long units) {
    atomic_fetch_add_explicit(&strain_hb->queued, units, memory_order_relaxed);
    strain_touch();
}

void strain_heartbeat_started(long units) {
    atomic_fetch_add_explicit(&strain_hb->started, units, memory_order_relaxed);
    strain_touch();
}

void strain_heartbeat_finished(long units) {
    atomic_fetch_add_explicit(&strain_hb->finished, units, memory_order_relaxed);
    strain_touch();
}

void strain_heartbeat_beat(void) {
    atomic_fetch_add_explicit(&strain_hb->beats, 1, memory_order_relaxed);
    strain_touch();
}

static strain_heartbeat strain_heartbeat_snapshot(strain_heartbeat_block *block) {
    strain_heartbeat snapshot;
    snapshot.queued = atomic_load_explicit(&block->queued, memory_order_relaxed);
    snapshot.started = atomic_load_explicit(&block->started, memory_order_relaxed);
    snapshot.finished = atomic_load_explicit(&block->finished, memory_order_relaxed);
    snapshot.beats = atomic_load_explicit(&block->beats, memory_order_relaxed);
    snapshot.last_event_ns = atomic_load_explicit(&block->last_event_ns, memory_order_relaxed);
    return snapshot;
}

strain_heartbeat strain_heartbeat_read(void) { return strain_heartbeat_snapshot(strain_hb); }

int strain_heartbeat_create_shared(void) {
    int fd = memfd_create("strain-heartbeat", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    if (ftruncate(fd, 4096) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

void *strain_heartbeat_map(int fd) {
    void *block = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return block == MAP_FAILED ? NULL : block;
}

void strain_heartbeat_unmap(void *block) {
    if (block != NULL) munmap(block, 4096);
}

strain_heartbeat strain_heartbeat_read_mapped(const void *block) {
    return strain_heartbeat_snapshot((strain_heartbeat_block *)block);
}

int strain_heartbeat_share(int fd) {
    void *block = strain_heartbeat_map(fd);
    if (block == NULL) return errno;
    strain_hb = block;
    return 0;
}

// MARK: - Scenario work on this thread

// Each thread that ever runs work takes a registry entry once (its index cached
// in TLS), so the watchdog can list the threads holding work without signals.
#define STRAIN_WORK_REGISTRY_SIZE 8192

typedef struct {
    _Atomic int tid;
    _Atomic long nesting;
    // The root queue a libdispatch worker serves, when Strain's work told it (static storage).
    _Atomic(const char *) root_queue;
} strain_work_entry;

static strain_work_entry strain_work_registry[STRAIN_WORK_REGISTRY_SIZE];
static _Atomic int strain_work_registry_used;
static __thread long strain_work_nesting;
static __thread int strain_work_index = -1;

// The calling thread's registry entry, taken on first use; NULL when the registry is full.
static strain_work_entry *strain_work_entry_of_self(void) {
    if (strain_work_index < 0) {
        int index = atomic_fetch_add_explicit(&strain_work_registry_used, 1, memory_order_relaxed);
        if (index >= STRAIN_WORK_REGISTRY_SIZE) {
            strain_work_index = STRAIN_WORK_REGISTRY_SIZE;  // full: this thread goes unlisted
            return NULL;
        }
        atomic_store_explicit(&strain_work_registry[index].tid, (int)syscall(SYS_gettid), memory_order_relaxed);
        strain_work_index = index;
    }
    return strain_work_index < STRAIN_WORK_REGISTRY_SIZE ? &strain_work_registry[strain_work_index] : NULL;
}

void strain_work_enter(void) {
    strain_work_nesting++;
    // A counted trial (callgrind or a perf counter) counts what threads do while they hold work.
    if (strain_work_nesting == 1) strain_instr_thread_on();
    if (strain_work_entry_of_self() != NULL) {
        atomic_store_explicit(&strain_work_registry[strain_work_index].nesting, strain_work_nesting, memory_order_release);
    }
}

void strain_work_leave(void) {
    strain_work_nesting--;
    if (strain_work_nesting == 0) strain_instr_thread_off();
    if (strain_work_index >= 0 && strain_work_index < STRAIN_WORK_REGISTRY_SIZE) {
        atomic_store_explicit(&strain_work_registry[strain_work_index].nesting, strain_work_nesting, memory_order_release);
    }
}

int strain_in_work(void) { return strain_work_nesting > 0; }

// libdispatch's overcommit root queues by QoS, labelled as its init.c labels them.
static const char *const strain_overcommit_roots[] = {
    "com.apple.root.maintenance-qos.overcommit", "com.apple.root.background-qos.overcommit",
    "com.apple.root.utility-qos.overcommit",     "com.apple.root.default-qos.overcommit",
    "com.apple.root.user-initiated-qos.overcommit", "com.apple.root.user-interactive-qos.overcommit",
};
static pthread_key_t strain_root_queue_key;
static pthread_once_t strain_root_queue_once = PTHREAD_ONCE_INIT;

// At the thread's exit: a later thread that gets its tid is not taken for this worker.
static void strain_root_queue_forget(void *entry) {
    atomic_store_explicit(&((strain_work_entry *)entry)->root_queue, NULL, memory_order_release);
}

static void strain_root_queue_key_create(void) { pthread_key_create(&strain_root_queue_key, strain_root_queue_forget); }

void strain_work_note_overcommit_root(int qos) {
    if (qos < 0 || qos >= (int)(sizeof(strain_overcommit_roots) / sizeof(strain_overcommit_roots[0]))) return;
    strain_work_entry *entry = strain_work_entry_of_self();
    // Once per thread: a worker serves one root queue for its life.
    if (entry == NULL || atomic_load_explicit(&entry->root_queue, memory_order_relaxed) != NULL) return;
    pthread_once(&strain_root_queue_once, strain_root_queue_key_create);
    pthread_setspecific(strain_root_queue_key, entry);
    atomic_store_explicit(&entry->root_queue, strain_overcommit_roots[qos], memory_order_release);
}

// Async-signal-safe: atomic loads over the registry, newest entry first (a reused tid is a later entry).
const char *strain_work_root_queue(int tid) {
    int used = atomic_load_explicit(&strain_work_registry_used, memory_order_acquire);
    if (used > STRAIN_WORK_REGISTRY_SIZE) used = STRAIN_WORK_REGISTRY_SIZE;
    for (int i = used - 1; i >= 0; i--) {
        if (atomic_load_explicit(&strain_work_registry[i].tid, memory_order_relaxed) == tid) {
            return atomic_load_explicit(&strain_work_registry[i].root_queue, memory_order_acquire);
        }
    }
    return NULL;
}

size_t strain_threads_in_work(int *tids, size_t capacity) {
    int used = atomic_load_explicit(&strain_work_registry_used, memory_order_acquire);
    if (used > STRAIN_WORK_REGISTRY_SIZE) used = STRAIN_WORK_REGISTRY_SIZE;
    size_t count = 0;
    for (int i = 0; i < used && count < capacity; i++) {
        if (atomic_load_explicit(&strain_work_registry[i].nesting, memory_order_acquire) > 0) {
            int tid = atomic_load_explicit(&strain_work_registry[i].tid, memory_order_relaxed);
            if (tid > 0) tids[count++] = tid;
        }
    }
    return count;
}

// MARK: - Dump

// si_value: magic (high bits) | generation (bits 20-35) | slot index (low 20 bits).
#define STRAIN_DUMP_MAGIC ((uintptr_t)0x57A1000000000000ULL)
#define STRAIN_DUMP_MAGIC_MASK ((uintptr_t)0xFFFF000000000000ULL)
#define STRAIN_DUMP_SLOT_MASK ((uintptr_t)0xFFFFFULL)
#define STRAIN_DUMP_GENERATION_SHIFT 20
#define STRAIN_DUMP_GENERATION_MASK ((uintptr_t)0xFFFFULL)

// DECLINED: asked, but the thread holds SIGSYS back and cannot answer; listed unanswered.
enum { STRAIN_SLOT_PENDING = 0, STRAIN_SLOT_ANSWERED = 1, STRAIN_SLOT_GONE = 2, STRAIN_SLOT_DECLINED = 3 };

typedef struct {
    _Atomic int state;
    int tid;
    int in_work;
    int frame_count;
    long frames_total;
    uint64_t answered_ns;
} strain_dump_slot;

static strain_dump_slot *strain_slots;
static uintptr_t *strain_slot_frames;
static size_t strain_slot_capacity;
static size_t strain_frames_per_slot;
// While a dump is in progress: its generation and how many slots it uses.
static _Atomic int strain_dump_active;
static _Atomic uintptr_t strain_dump_generation;
static _Atomic size_t strain_dump_count;
// A process dump holds each thread that answered in its handler until the dump is
// over (`strain_dump_released`, a futex word), and each but the main one until the
// main thread has left its own handler too. A program's process-wide signal that
// comes meanwhile (a Ctrl-C) then waits for the main thread, which takes it as it
// would have without the dump, instead of going to a thread that had answered and
// gone back to work: a program that learns of it only from its main thread's EINTR
// (CPython, a C loop on a flag) lost it when it had a second thread (re-trial 33h's
// NEW-2).
static _Atomic int strain_dump_holding;
static _Atomic int strain_dump_released;
// Whether the main thread is in this dump (it answered, or asks), and the signals
// it blocked where the dump interrupted it (SigBlk's bits: signal N is bit N - 1).
static _Atomic int strain_dump_main_in;
static unsigned long long strain_dump_main_mask;
static void strain_dump_hold(void);

int strain_dump_install(size_t max_threads, size_t frames_per_thread) {
    if (strain_slots != NULL) return 0;
    if (max_threads > STRAIN_DUMP_SLOT_MASK) max_threads = STRAIN_DUMP_SLOT_MASK;
    size_t slot_bytes = max_threads * sizeof(strain_dump_slot);
    size_t frame_bytes = max_threads * frames_per_thread * sizeof(uintptr_t);
    void *slots = mmap(NULL, slot_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slots == MAP_FAILED) return errno;
    void *frames = mmap(NULL, frame_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (frames == MAP_FAILED) {
        int error = errno;
        munmap(slots, slot_bytes);
        return error;
    }
    strain_slot_frames = frames;
    strain_frames_per_slot = frames_per_thread;
    strain_slot_capacity = max_threads;
    strain_slots = slots;
    return 0;
}

// The slot a SIGSYS asks this thread to fill, or -1 when it is not a dump
// request. A request normally carries its slot in si_value; when the kernel
// could not queue the siginfo (RLIMIT_SIGPENDING), the signal still arrives,
// as SI_USER, and the thread finds its slot by its tid while a dump is on.
static long strain_dump_slot_for(const siginfo_t *info) {
    if (strain_slots == NULL || !atomic_load_explicit(&strain_dump_active, memory_order_acquire)) return -1;
    uintptr_t generation = atomic_load_explicit(&strain_dump_generation, memory_order_relaxed);
    size_t count = atomic_load_explicit(&strain_dump_count, memory_order_relaxed);
    if (info->si_code == SI_QUEUE && info->si_pid == getpid()) {
        uintptr_t value = (uintptr_t)info->si_value.sival_ptr;
        if ((value & STRAIN_DUMP_MAGIC_MASK) != STRAIN_DUMP_MAGIC) return -1;
        // A late answer to an earlier dump must not fill this one's slot.
        if (((value >> STRAIN_DUMP_GENERATION_SHIFT) & STRAIN_DUMP_GENERATION_MASK) != generation) return -2;
        size_t index = (size_t)(value & STRAIN_DUMP_SLOT_MASK);
        return index < count ? (long)index : -1;
    }
    if (info->si_code == SI_USER || info->si_code == SI_TKILL) {
        int tid = (int)syscall(SYS_gettid);
        for (size_t i = 0; i < count; i++) {
            if (strain_slots[i].tid == tid) return (long)i;
        }
    }
    return -1;
}

int strain_is_dump_request(const siginfo_t *info) {
    if (info->si_code == SI_QUEUE && info->si_pid == getpid() &&
        ((uintptr_t)info->si_value.sival_ptr & STRAIN_DUMP_MAGIC_MASK) == STRAIN_DUMP_MAGIC) {
        return 1;  // ours, perhaps from an earlier dump: answered or ignored, never a crash
    }
    return strain_dump_slot_for(info) >= 0;
}

// Walks the interrupted code from a signal's context: the first `capacity` frames
// into `frames` (how many in `kept`); returns how many there were, up to 100,000.
// Async-signal-safe (libunwind's local walk, preallocated memory).
static long strain_walk_signal_context(void *context, uintptr_t *frames, size_t capacity, int *kept) {
    long total = 0;
    *kept = 0;
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) != 0) return 0;
    do {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if ((size_t)*kept < capacity) frames[(*kept)++] = (uintptr_t)ip;
        total++;
    } while (unw_step(&cursor) > 0 && total < 100000);
    return total;
}

// MARK: - A program's signal during a dump

#if defined(__x86_64__)
// Whether the interrupted call (x86-64 numbers, arguments as the kernel got them) is a
// wait the kernel restarts after a handler with SA_RESTART and fails with EINTR after
// one without: a blocking read, accept, wait for a child, file lock or futex wait (a
// timed wait fails with EINTR after any handler). Never a wake or a write: failing one
// that had not yet run would lose it.
static int strain_restarted_wait(const greg_t *registers) {
    switch (registers[REG_RAX]) {
    case 0: case 19: case 43: case 45: case 47: case 61: case 73: case 247: case 288:
        return 1;
    case 72:  // fcntl: F_SETLKW, F_OFD_SETLKW
        return registers[REG_RSI] == 7 || registers[REG_RSI] == 38;
    case 202: {  // futex: FUTEX_WAIT, FUTEX_WAIT_BITSET
        long operation = registers[REG_RSI] & 127;
        return operation == 0 || operation == 9;
    }
    default:
        return 0;
    }
}

// Whether a signal the interrupted thread would take is pending, held back by the
// handler's mask, and caught by the program with no SA_RESTART.
static int strain_program_signal_held(const ucontext_t *interrupted) {
    sigset_t pending, held;
    if (sigpending(&pending) != 0) return 0;
    strain_handler_mask(&held);
    for (int number = 1; number <= 64; number++) {
        if (sigismember(&held, number) != 1 || sigismember(&pending, number) != 1) continue;
        if (sigismember(&interrupted->uc_sigmask, number) == 1) continue;
        struct {
            void *handler;
            unsigned long flags;
            unsigned long rest[3];
        } current;
        if (syscall(SYS_rt_sigaction, number, NULL, &current, sizeof(unsigned long)) != 0) continue;
        if (current.handler == (void *)SIG_DFL || current.handler == (void *)SIG_IGN) continue;
        if (!(current.flags & SA_RESTART)) return 1;
    }
    return 0;
}
#endif

// A program's signal that came during the dump waited for the handler's end; without
// the dump it would have broken the thread's blocking call with EINTR (its handler has
// no SA_RESTART: CPython's, whose KeyboardInterrupt runs when the wait fails so, or a C
// loop that checks a flag its handler sets). The kernel had already set the call to
// restart for the dump's SA_RESTART, and the program slept on with its signal handled
// (a Ctrl-C during a dump was lost: re-trial 33e). So the call fails with EINTR, as it
// would have. x86-64: a restart is the `syscall` instruction again, its number in rax.
void strain_dump_keep_interruption(void *context) {
#if defined(__x86_64__)
    ucontext_t *interrupted = (ucontext_t *)context;
    if (interrupted == NULL || !strain_program_signal_held(interrupted)) return;
    greg_t *registers = interrupted->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)registers[REG_RIP];
    if (ip == NULL || ip[0] != 0x0f || ip[1] != 0x05 || !strain_restarted_wait(registers)) return;
    registers[REG_RAX] = -EINTR;
    registers[REG_RIP] += 2;
#else
    (void)context;
#endif
}

void strain_dump_answer(const siginfo_t *info, void *context) {
    int saved_errno = errno;
    long index = strain_dump_slot_for(info);
    if (index < 0) {
        errno = saved_errno;
        return;
    }
    strain_dump_slot *slot = &strain_slots[index];
    int tid = (int)syscall(SYS_gettid);
    if (slot->tid != tid || atomic_load_explicit(&slot->state, memory_order_acquire) != STRAIN_SLOT_PENDING) {
        errno = saved_errno;
        return;
    }
    int holding = atomic_load_explicit(&strain_dump_holding, memory_order_relaxed);
    if (holding && tid == getpid()) {
        memcpy(&strain_dump_main_mask, &((ucontext_t *)context)->uc_sigmask, sizeof(strain_dump_main_mask));
        atomic_store_explicit(&strain_dump_main_in, 1, memory_order_release);
    }
    uintptr_t *frames = strain_slot_frames + (size_t)index * strain_frames_per_slot;
    int kept = 0;
    long total = strain_walk_signal_context(context, frames, strain_frames_per_slot, &kept);
    slot->in_work = strain_work_nesting > 0;
    slot->frame_count = kept;
    slot->frames_total = total;
    slot->answered_ns = strain_monotonic_ns();
    atomic_store_explicit(&slot->state, STRAIN_SLOT_ANSWERED, memory_order_release);
    // The main thread holds too, so that a signal it takes after the dump does not end the
    // program before the dump is written, and leaves first; it looks for a signal of the
    // program's that came meanwhile last of all. The others look before they hold: one that
    // came while they held is the main thread's.
    if (holding && tid == getpid()) strain_dump_hold();
    strain_dump_keep_interruption(context);
    if (holding && tid != getpid()) strain_dump_hold();
    errno = saved_errno;
}

// `/proc/self/task/TID/FILE` into `path` (64 bytes). Async-signal-safe.
static void strain_thread_path(char *path, int tid, const char *file) {
    strcpy(path, "/proc/self/task/");
    char digits[16];
    size_t at = sizeof(digits);
    digits[--at] = 0;
    do { digits[--at] = (char)('0' + tid % 10); tid /= 10; } while (tid != 0);
    strcat(path, digits + at);
    strcat(path, "/");
    strcat(path, file);
}

long strain_read_proc_text(const char *path, char *text, size_t capacity) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t length = read(fd, text, capacity - 1);
    close(fd);
    if (length < 0) return -1;
    text[length] = 0;
    return (long)length;
}

unsigned long long strain_status_mask(const char *text, const char *name) {
    const char *line = strstr(text, name);
    if (line == NULL) return 0;
    line += strlen(name);
    while (*line == ' ' || *line == '\t') line++;
    unsigned long long mask = 0;
    for (int digit = 0; digit < 16; digit++, line++) {
        char c = *line;
        int value = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (value < 0) return 0;
        mask = mask << 4 | (unsigned long long)value;
    }
    return mask;
}

// Whether thread `tid` of this process holds `signal_number` (1-64) back: blocks it with
// it still pending for the thread (SigBlk and SigPnd in /proc/self/task/TID/status). A
// thread that took the signal and is still walking its stack blocks it too, in the
// handler, but it is no longer pending. 0 when it cannot be read. Async-signal-safe.
static int strain_thread_holds_back(int tid, int signal_number) {
    char path[64];
    strain_thread_path(path, tid, "status");
    char text[4096];
    if (strain_read_proc_text(path, text, sizeof(text)) <= 0) return 0;
    unsigned long long bit = 1ULL << (signal_number - 1);
    return (strain_status_mask(text, "\nSigBlk:") & bit) && (strain_status_mask(text, "\nSigPnd:") & bit);
}

int strain_tgsigqueue(int pid, int tid, int signal_number, uintptr_t value) {
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = signal_number;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    info.si_value.sival_ptr = (void *)value;
    return syscall(SYS_rt_tgsigqueueinfo, pid, tid, signal_number, &info) == 0 ? 0 : errno;
}

// Asks thread `tids[index]` for its slot of dump `generation`.
static void strain_dump_ask(const int *tids, size_t index, uintptr_t generation) {
    uintptr_t value = STRAIN_DUMP_MAGIC | (generation << STRAIN_DUMP_GENERATION_SHIFT) | (uintptr_t)index;
    if (strain_tgsigqueue(getpid(), tids[index], SIGSYS, value) == ESRCH) {
        // The thread ended since it was listed: nothing to wait for.
        atomic_store_explicit(&strain_slots[index].state, STRAIN_SLOT_GONE, memory_order_release);
    }
}

// A thread still silent 1 ms after it was asked that holds SIGSYS back (a helper that
// blocks every signal) cannot answer: not waited for (the whole timeout, while the
// program's own signals wait for the dump's end: a Ctrl-C then was lost, re-trials 33e,
// 33f). One still walking a deep stack in the handler is waited for (33g).
static void strain_dump_decline(const int *tids, size_t index) {
    int pending = STRAIN_SLOT_PENDING;
    if (atomic_load_explicit(&strain_slots[index].state, memory_order_acquire) == STRAIN_SLOT_PENDING && strain_thread_holds_back(tids[index], SIGSYS)) {
        atomic_compare_exchange_strong(&strain_slots[index].state, &pending, STRAIN_SLOT_DECLINED);
    }
}

// `hold`: a process dump's (strain_dump_hold). `last`: the index of the thread asked only
// once the others have settled (or two thirds of the timeout have passed), or -1.
static int strain_dump_threads_holding(const int *tids, size_t count, uint64_t timeout_ns, int hold, long last) {
    if (strain_slots == NULL) return -EINVAL;
    if (count > strain_slot_capacity) count = strain_slot_capacity;
    if (last >= (long)count) last = -1;
    atomic_store_explicit(&strain_dump_active, 0, memory_order_seq_cst);
    atomic_store_explicit(&strain_dump_holding, hold, memory_order_relaxed);
    atomic_store_explicit(&strain_dump_released, 0, memory_order_relaxed);
    uintptr_t generation = (atomic_load_explicit(&strain_dump_generation, memory_order_relaxed) + 1) & STRAIN_DUMP_GENERATION_MASK;
    atomic_store_explicit(&strain_dump_generation, generation, memory_order_relaxed);
    for (size_t i = 0; i < count; i++) {
        atomic_store_explicit(&strain_slots[i].state, STRAIN_SLOT_PENDING, memory_order_relaxed);
        strain_slots[i].tid = tids[i];
        strain_slots[i].frame_count = 0;
        strain_slots[i].frames_total = 0;
    }
    atomic_store_explicit(&strain_dump_count, count, memory_order_relaxed);
    atomic_store_explicit(&strain_dump_active, 1, memory_order_seq_cst);
    for (size_t i = 0; i < count; i++) {
        if ((long)i != last) strain_dump_ask(tids, i, generation);
    }
    uint64_t asked = strain_monotonic_ns();
    uint64_t deadline = asked + timeout_ns;
    uint64_t asked_last = 0;
    int answered = 0;
    int declined = 0;
    for (;;) {
        answered = 0;
        size_t settled = 0;
        for (size_t i = 0; i < count; i++) {
            int state = atomic_load_explicit(&strain_slots[i].state, memory_order_acquire);
            answered += state == STRAIN_SLOT_ANSWERED;
            settled += state != STRAIN_SLOT_PENDING;
        }
        uint64_t now = strain_monotonic_ns();
        if (settled == count || now >= deadline) break;
        if (last >= 0 && asked_last == 0 && (settled == count - 1 || now >= asked + timeout_ns / 3 * 2)) {
            strain_dump_ask(tids, (size_t)last, generation);
            asked_last = strain_monotonic_ns();
            continue;
        }
        if (!declined && now >= asked + 1000 * 1000) {
            declined = 1;
            for (size_t i = 0; i < count; i++) {
                if ((long)i != last) strain_dump_decline(tids, i);
            }
            continue;
        }
        if (declined == 1 && asked_last != 0 && now >= asked_last + 1000 * 1000) {
            declined = 2;
            strain_dump_decline(tids, (size_t)last);
            continue;
        }
        struct timespec pause = {0, 50 * 1000};
        nanosleep(&pause, NULL);
    }
    return answered;
}

int strain_dump_threads(const int *tids, size_t count, uint64_t timeout_ns) {
    return strain_dump_threads_holding(tids, count, timeout_ns, 0, -1);
}

// The signals the dump's handler blocks, as SigBlk's bits (SIGKILL and SIGSTOP never are).
static unsigned long long strain_handler_bits(void) {
    sigset_t mask;
    strain_handler_mask(&mask);
    unsigned long long bits = 0;
    memcpy(&bits, &mask, sizeof(bits));
    return bits & ~(1ULL << (SIGKILL - 1)) & ~(1ULL << (SIGSTOP - 1));
}

// Until the main thread is out of the dump's handler (no longer blocks every signal it
// blocks), at most 100 ms: it leaves first.
static void strain_dump_wait_for_main(void) {
    if (!atomic_load_explicit(&strain_dump_main_in, memory_order_acquire) || getpid() == (pid_t)syscall(SYS_gettid)) return;
    unsigned long long held = strain_handler_bits() & ~strain_dump_main_mask;
    if (held == 0) return;  // it blocked them all itself: it takes none of them
    char path[64];
    strain_thread_path(path, getpid(), "status");
    uint64_t limit = strain_monotonic_ns() + 100ULL * 1000 * 1000;
    char text[4096];
    while (strain_monotonic_ns() < limit) {
        if (strain_read_proc_text(path, text, sizeof(text)) <= 0) return;
        if ((strain_status_mask(text, "\nSigBlk:") & held) != held) return;
        struct timespec pause = {0, 100 * 1000};
        nanosleep(&pause, NULL);
    }
}

// A held thread's wait: until the dump is over, at most 1 s (the dump's own walk could
// need a lock the held thread holds, dl_iterate_phdr's), then for the main thread.
static void strain_dump_hold(void) {
    uint64_t limit = strain_monotonic_ns() + 1000ULL * 1000 * 1000;
    while (!atomic_load_explicit(&strain_dump_released, memory_order_acquire)) {
        uint64_t now = strain_monotonic_ns();
        if (now >= limit) return;
        struct timespec wait = {0, 10 * 1000 * 1000};
        syscall(SYS_futex, &strain_dump_released, FUTEX_WAIT_PRIVATE, 0, &wait, NULL, 0);
    }
    strain_dump_wait_for_main();
}

static void strain_dump_release(void) {
    atomic_store_explicit(&strain_dump_released, 1, memory_order_release);
    syscall(SYS_futex, &strain_dump_released, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

int strain_dump_slot_read(size_t index, strain_dump_thread *out) {
    if (strain_slots == NULL || index >= strain_slot_capacity) return 0;
    strain_dump_slot *slot = &strain_slots[index];
    int state = atomic_load_explicit(&slot->state, memory_order_acquire);
    if (state == STRAIN_SLOT_GONE) return -1;
    if (state != STRAIN_SLOT_ANSWERED) return 0;
    out->tid = slot->tid;
    out->in_work = slot->in_work;
    out->frame_count = slot->frame_count;
    out->frames_total = slot->frames_total;
    out->frames = strain_slot_frames + index * strain_frames_per_slot;
    out->answered_ns = slot->answered_ns;
    return 1;
}

// MARK: - A whole process' dump, asked from outside (SIGQUIT, `strain dump`)

#define STRAIN_PROCESS_DUMP_THREADS 4096
#define STRAIN_SELF_FRAMES 256

static int strain_request_tids[STRAIN_PROCESS_DUMP_THREADS];
static uintptr_t strain_self_frames[STRAIN_SELF_FRAMES];
static char strain_dump_out[64 * 1024];
static atomic_int strain_process_dumping;
static long strain_process_dump_sequence;

int strain_is_process_dump_request(int signal_number, const siginfo_t *info) {
    int dump_signal = strain_probe_dump_signal();
    if (dump_signal != 0 && signal_number == dump_signal) return 1;
    return signal_number == SIGSYS && info->si_code == SI_QUEUE && info->si_pid != getpid() &&
        info->si_value.sival_int == STRAIN_DUMP_REQUEST_VALUE;
}

// The ids in /proc/self/task, but `self`: getdents64 and open are async-signal-safe.
static size_t strain_list_threads(int self, int *tids, size_t capacity) {
    size_t count = 0;
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buffer[4096] __attribute__((aligned(8)));
    for (;;) {
        long length = syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
        if (length <= 0) break;
        for (long at = 0; at < length;) {
            // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
            unsigned short record_length;
            memcpy(&record_length, buffer + at + 16, sizeof(record_length));
            const char *name = buffer + at + 19;
            int tid = 0;
            for (const char *c = name; *c >= '0' && *c <= '9'; c++) tid = tid * 10 + (*c - '0');
            if (tid > 0 && tid != self && count < capacity) tids[count++] = tid;
            at += record_length;
        }
    }
    close(fd);
    return count;
}

static void strain_put_thread_file(strain_writer *writer, const char *label, int tid, const char *file) {
    char path[64];
    strain_thread_path(path, tid, file);
    strain_writer_string(writer, label);
    strain_writer_put(writer, " ", 1);
    strain_writer_file(writer, path, 1);
    strain_writer_put(writer, "\n", 1);
}

// Each listed thread's /proc stat and syscall, read before it is asked: a thread the dump
// holds shows the hold's own wait there. Mapped at the first process dump.
#define STRAIN_THREAD_TEXT 640
static char *strain_thread_texts;

static const char *strain_thread_text(size_t index, int which) {
    return strain_thread_texts == NULL ? NULL : strain_thread_texts + (index * 2 + (size_t)which) * STRAIN_THREAD_TEXT;
}

static void strain_read_thread_texts(const int *tids, size_t count) {
    if (strain_thread_texts == NULL) {
        void *area = mmap(NULL, (size_t)STRAIN_PROCESS_DUMP_THREADS * 2 * STRAIN_THREAD_TEXT, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (area == MAP_FAILED) return;
        strain_thread_texts = area;
    }
    static const char *const files[2] = {"stat", "syscall"};
    for (size_t i = 0; i < count; i++) {
        for (int which = 0; which < 2; which++) {
            char path[64];
            strain_thread_path(path, tids[i], files[which]);
            char *text = (char *)strain_thread_text(i, which);
            long length = strain_read_proc_text(path, text, STRAIN_THREAD_TEXT);
            if (length < 0) {
                length = 0;
                text[0] = 0;
            }
            while (length > 0 && text[length - 1] == '\n') text[--length] = 0;
        }
    }
}

// `label` and a text read before (`text`), or the file as it is now when there is none.
static void strain_put_thread_text(strain_writer *writer, const char *label, int tid, const char *file, const char *text) {
    if (text == NULL) {
        strain_put_thread_file(writer, label, tid, file);
        return;
    }
    strain_writer_string(writer, label);
    strain_writer_put(writer, " ", 1);
    strain_writer_string(writer, text);
    strain_writer_put(writer, "\n", 1);
}

static void strain_put_dumped_thread(strain_writer *writer, int tid, int answered, int in_work, long total,
                                     const uintptr_t *frames, int count, const char *stat, const char *syscall_text) {
    strain_writer_field_decimal(writer, "thread", tid);
    strain_writer_field_decimal(writer, "answered", answered);
    strain_writer_field_decimal(writer, "in_work", in_work);
    strain_writer_field_decimal(writer, "frames_total", total);
    const char *root_queue = strain_work_root_queue(tid);
    if (root_queue != NULL) {
        strain_writer_string(writer, "name ");
        strain_writer_string(writer, root_queue);
        strain_writer_put(writer, "\n", 1);
    } else {
        strain_put_thread_file(writer, "name", tid, "comm");
    }
    strain_put_thread_text(writer, "stat", tid, "stat", stat);
    strain_put_thread_text(writer, "syscall", tid, "syscall", syscall_text);
    for (int i = 0; i < count; i++) {
        strain_writer_put(writer, "f ", 2);
        strain_writer_hex(writer, frames[i]);
        strain_writer_put(writer, "\n", 1);
    }
}

void strain_dump_process(int signal_number, const siginfo_t *info, void *context) {
    int saved_errno = errno;
    int expected = 0;
    if (strain_slots == NULL || atomic_load(&strain_dump_active) ||
        !atomic_compare_exchange_strong(&strain_process_dumping, &expected, 1)) {
        errno = saved_errno;  // a dump is under way: this request is answered by it
        return;
    }
    uint64_t started = strain_monotonic_ns();
    int self = (int)syscall(SYS_gettid);
    size_t count = strain_list_threads(self, strain_request_tids, STRAIN_PROCESS_DUMP_THREADS);
    if (count > strain_slot_capacity) count = strain_slot_capacity;
    // The others answer a SIGSYS each, on their own alternate stacks, while this
    // thread walks itself from the signal's context.
    if (self == getpid()) memcpy(&strain_dump_main_mask, &((ucontext_t *)context)->uc_sigmask, sizeof(strain_dump_main_mask));
    atomic_store_explicit(&strain_dump_main_in, self == getpid(), memory_order_release);
    // Asked on another thread (--stall asks so), the main thread is asked last, once the
    // others hold: a signal of the program's then never finds the main thread holding it
    // back while another takes it.
    long last = -1;
    for (size_t i = 0; i < count; i++) {
        if (strain_request_tids[i] != getpid()) continue;
        strain_request_tids[i] = strain_request_tids[count - 1];
        strain_request_tids[count - 1] = getpid();
        last = (long)count - 1;
        break;
    }
    strain_read_thread_texts(strain_request_tids, count);
    strain_dump_threads_holding(strain_request_tids, count, 300ULL * 1000 * 1000, 1, last);
    atomic_store_explicit(&strain_dump_active, 0, memory_order_seq_cst);
    int self_kept = 0;
    long self_total = strain_walk_signal_context(context, strain_self_frames, STRAIN_SELF_FRAMES, &self_kept);
    uint64_t walked = strain_monotonic_ns();

    long sequence = ++strain_process_dump_sequence;
    char path[PATH_MAX];
    char temporary[PATH_MAX];
    strain_writer writer = {-1, strain_dump_out, sizeof(strain_dump_out), 0};
    if (strain_record_name(path, sizeof(path), "dump-", sequence, ".txt") &&
        strain_record_name(temporary, sizeof(temporary), "dump-", sequence, ".tmp")) {
        writer.fd = strain_probe_record_open(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    }
    if (writer.fd >= 0) {
        strain_writer_string(&writer, "STRAIN-DUMP 1\n");
        strain_writer_field_decimal(&writer, "pid", (long long)getpid());
        strain_writer_field_decimal(&writer, "signal", signal_number);
        strain_writer_field_decimal(&writer, "requester", (long long)info->si_pid);
        strain_writer_field_decimal(&writer, "requested_on", self);
        strain_writer_field_decimal(&writer, "dump_ns", (long long)(walked - started));
        strain_put_dumped_thread(&writer, self, 1, strain_work_nesting > 0, self_total, strain_self_frames, self_kept, NULL, NULL);
        for (size_t i = 0; i < count; i++) {
            strain_dump_slot *slot = &strain_slots[i];
            int state = atomic_load_explicit(&slot->state, memory_order_acquire);
            if (state == STRAIN_SLOT_GONE) continue;
            int answered = state == STRAIN_SLOT_ANSWERED;
            strain_put_dumped_thread(&writer, strain_request_tids[i], answered, answered ? slot->in_work : 0,
                                     answered ? slot->frames_total : 0, strain_slot_frames + i * strain_frames_per_slot,
                                     answered ? slot->frame_count : 0, strain_thread_text(i, 0), strain_thread_text(i, 1));
        }
        strain_writer_string(&writer, "maps\n");
        strain_writer_file(&writer, "/proc/self/maps", 0);
        strain_writer_string(&writer, "end-maps\nEND\n");
        strain_writer_flush(&writer);
        close(writer.fd);
        strain_record_rename(temporary, path);
    }
    strain_dump_release();
    atomic_store(&strain_process_dumping, 0);
    strain_dump_keep_interruption(context);
    strain_dump_wait_for_main();
    errno = saved_errno;
}

// MARK: - Thread names

int strain_set_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof(shortened) - 1);
    shortened[sizeof(shortened) - 1] = 0;
    return pthread_setname_np(pthread_self(), shortened);
}

#pragma clang attribute pop
