// The fault handler's walk of an interrupted stack: libunwind's cached fast trace
// (unw_backtrace) where the thread was warmed for it, the unw_step loop otherwise.
//
// Measured here (release, one run of Scenarios/bench-harness.yaml): an 8 MiB
// overflow, 130,999 frames, takes the unw_step loop about 70 ms and unw_backtrace
// about 4.4 ms (most of it libunwind's validation of each stack page; 0.006 µs a
// frame where no read is validated: strain_walk_compare.c), frame for frame the
// same (FaultWalkTests). It is used only when every one of these holds, and
// the unw_step loop makes the record otherwise:
//
// - the thread was warmed (strain_thread_warm_fast_walk, ordinary code): libunwind
//   sets up its per-thread cache on first use with pthread_once, a lock of its own
//   memory pool and pthread_setspecific, none async-signal-safe. Warm, the trace
//   uses only the cache, reads of the stack, and (for a frame it has not seen) the
//   same unw_step machinery the loop uses;
// - the buffer, reserved before any fault (strain_probe_reserve_fast_walk), did not
//   fill up: unw_backtrace fills it from the innermost frame and stops when it is
//   full, so a full buffer would lose the outermost frames and the total;
// - the interrupted frame is among its first frames (the trace starts in the
//   handler, then the signal trampoline);
// - it ended on the outermost frame that thread's own unw_step walk ended on when
//   it was warmed: the thread's bottom frames (clone3, or _start on the main thread)
//   never move, so that walk's last stack pointer and its last unw_step answer are
//   what today's walk would say at the fault too. A trace that ends anywhere else
//   stopped short (code without unwind information, a frame the fast trace cannot
//   follow), and only the unw_step loop can say how and where.
//
// `walk fast` says unw_backtrace made the record. Where its fast trace meets a frame
// it cannot follow, unw_backtrace itself walks the whole stack again with an unw_step
// loop: the frames are then the loop's, and only walk_ns shows it.
#include "strain_probe.h"
#include "strain_internal.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>

#define STRAIN_TLS __thread __attribute__((tls_model("initial-exec")))

/// The fewest bytes a frame below the innermost one takes on x86-64: a return
/// address, and 8 more to keep the stack 16-byte aligned at the next call.
#define STRAIN_MIN_FRAME_BYTES 16
/// Frames of the handler and the signal trampoline ahead of the interrupted frame,
/// and of an alternate stack's own, on top of the deepest stack.
#define STRAIN_FAST_WALK_SLACK 1024
/// The deepest stack the buffer is sized for: 64 MiB, 4 Mi frames, 32 MiB of
/// address space (reserved, touched only as deep as a walk goes). A deeper stack
/// fills it and the unw_step loop walks it (it keeps both ends of any depth).
#define STRAIN_FAST_WALK_MAX_STACK ((size_t)64 << 20)
/// Frames the warm-up walks may see: a thread is warmed near its bottom.
#define STRAIN_WARM_FRAMES 512
/// How far into the trace the interrupted frame may lie.
#define STRAIN_SIGNAL_FRAME_SEARCH 16

static uintptr_t *strain_fast_frames;
static size_t strain_fast_capacity;
static atomic_int strain_prefer_step;

// What the thread's own unw_step walk said when it was warmed.
static STRAIN_TLS int strain_walk_warm;
static STRAIN_TLS uintptr_t strain_walk_outermost_ip;
static STRAIN_TLS uintptr_t strain_walk_outermost_sp;
static STRAIN_TLS int strain_walk_outermost_end;

int strain_probe_reserve_fast_walk(size_t deepest_stack_bytes) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur > deepest_stack_bytes) {
        deepest_stack_bytes = (size_t)limit.rlim_cur;
    }
    pthread_attr_t attributes;
    if (pthread_getattr_default_np(&attributes) == 0) {
        size_t size = 0;
        if (pthread_attr_getstacksize(&attributes, &size) == 0 && size > deepest_stack_bytes) deepest_stack_bytes = size;
        pthread_attr_destroy(&attributes);
    }
    if (deepest_stack_bytes > STRAIN_FAST_WALK_MAX_STACK) deepest_stack_bytes = STRAIN_FAST_WALK_MAX_STACK;
    size_t frames = deepest_stack_bytes / STRAIN_MIN_FRAME_BYTES + STRAIN_FAST_WALK_SLACK;
    if (strain_fast_frames != NULL && strain_fast_capacity >= frames) return 0;
    void *buffer = mmap(NULL, frames * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (buffer == MAP_FAILED) return errno;
    if (strain_fast_frames != NULL) munmap(strain_fast_frames, strain_fast_capacity * sizeof(uintptr_t));
    strain_fast_frames = buffer;
    strain_fast_capacity = frames;
    return 0;
}

size_t strain_probe_fast_walk_capacity(void) { return strain_fast_capacity; }

void strain_probe_prefer_step_walk(int prefer) { atomic_store(&strain_prefer_step, prefer ? 1 : 0); }

int strain_thread_fast_walk_is_warm(void) { return strain_walk_warm; }

__attribute__((noinline)) int strain_thread_warm_fast_walk(void) {
    if (strain_walk_warm) return 0;
    // libunwind's per-thread cache, set up here in ordinary code.
    void *trace[STRAIN_WARM_FRAMES];
    int traced = unw_backtrace(trace, STRAIN_WARM_FRAMES);
    // The unw_step loop from here: where this thread's walks end, and how.
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return EINVAL;
    uintptr_t last_ip = 0, last_sp = 0;
    int end = -1;
    int steps = 0;
    do {
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        last_ip = (uintptr_t)ip;
        last_sp = (uintptr_t)sp;
        steps++;
    } while ((end = unw_step(&cursor)) > 0 && steps < STRAIN_WARM_FRAMES);
    // Both walks must end on the same frame, at the outermost one.
    if (traced <= 0 || traced >= STRAIN_WARM_FRAMES || steps >= STRAIN_WARM_FRAMES) return ENOSPC;
    if (end != 0 || (uintptr_t)trace[traced - 1] != last_ip) return EPROTO;
    strain_walk_outermost_ip = last_ip;
    strain_walk_outermost_sp = last_sp;
    strain_walk_outermost_end = end;
    strain_walk_warm = 1;
    return 0;
}

// MARK: - libunwind in copies of a process (the trial server's)

// libunwind opens a pipe when it is first used (its memory validation writes one
// byte of an address into it and reads it back) and keeps the two descriptor
// numbers for good. A copy of the trial server closes every descriptor it does not
// need and opens its own at the lowest free numbers: libunwind then reads the
// copy's heartbeat and writes into a closed descriptor, finds no address valid, and
// every walk stops after its first frame. So the server starts libunwind with its
// low descriptors taken (the pipe lands above what a copy keeps or opens early),
// notes the two numbers, and each copy puts a pipe of its own there right after it
// closed the server's.
static int strain_unwinder_pipe[2] = {-1, -1};

#define STRAIN_UNWINDER_LOW_DESCRIPTORS 16

int strain_probe_start_unwinder(void) {
    int fillers[STRAIN_UNWINDER_LOW_DESCRIPTORS];
    int filled = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) break;
        if (fd >= STRAIN_UNWINDER_LOW_DESCRIPTORS) { close(fd); break; }
        fillers[filled++] = fd;
    }
    // Open descriptors above the fillers, before and after libunwind's first use.
    unsigned char before[STRAIN_UNWINDER_LOW_DESCRIPTORS + 64] = {0};
    for (int fd = STRAIN_UNWINDER_LOW_DESCRIPTORS; fd < (int)sizeof(before); fd++) before[fd] = fcntl(fd, F_GETFD) >= 0;
    unw_context_t context;
    unw_cursor_t cursor;
    int status = unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0 ? 0 : EINVAL;
    int found = 0;
    for (int fd = STRAIN_UNWINDER_LOW_DESCRIPTORS; fd < (int)sizeof(before) && found < 2; fd++) {
        if (!before[fd] && fcntl(fd, F_GETFD) >= 0) strain_unwinder_pipe[found++] = fd;
    }
    if (found != 2) strain_unwinder_pipe[0] = strain_unwinder_pipe[1] = -1;
    while (filled > 0) close(fillers[--filled]);
    return status;
}

int strain_probe_renew_unwinder_pipe(void) {
    if (strain_unwinder_pipe[0] < 0) return 0;
    int fresh[2];
    if (pipe2(fresh, O_CLOEXEC | O_NONBLOCK) != 0) return errno;
    int status = 0;
    for (int end = 0; end < 2; end++) {
        if (fresh[end] == strain_unwinder_pipe[end]) continue;
        if (dup3(fresh[end], strain_unwinder_pipe[end], O_CLOEXEC) < 0) status = errno;
    }
    for (int end = 0; end < 2; end++) {
        int used = fresh[end] == strain_unwinder_pipe[0] || fresh[end] == strain_unwinder_pipe[1];
        if (!used) close(fresh[end]);
    }
    return status;
}

// MARK: - In the handler (async-signal-safe once the thread is warm)

// A call through a NULL (or unmapped) function pointer faults with the instruction
// pointer where the call went: 0, or the fault address itself. There is no unwind
// information there, and libunwind stops at once ("at least 0 frames"). On x86-64 the
// call pushed its return address at the stack pointer: `caller` is then the caller's
// frame (that address, the stack pointer past it), and the faulting address is
// returned for the first frame, as gdb shows it (`#0 0x0`). Returns 0 (`caller`
// untouched) for any other fault, or when the word at the stack pointer is not mapped.
// Async-signal-safe: a copy of the context, mincore(2) and one read of the stack.
static int strain_walk_unmapped_call(const void *context, ucontext_t *caller, uintptr_t *faulting_ip) {
#if defined(__x86_64__)
    const ucontext_t *interrupted = (const ucontext_t *)context;
    uintptr_t ip = (uintptr_t)interrupted->uc_mcontext.gregs[REG_RIP];
    uintptr_t fault = (uintptr_t)interrupted->uc_mcontext.gregs[REG_CR2];
    uintptr_t sp = (uintptr_t)interrupted->uc_mcontext.gregs[REG_RSP];
    if ((ip != 0 && ip != fault) || sp == 0 || sp % sizeof(uintptr_t) != 0) return 0;
    // x86-64's base page; mincore fails with ENOMEM where nothing is mapped.
    const uintptr_t page = 4096;
    unsigned char resident = 0;
    if (mincore((void *)(sp & ~(page - 1)), (size_t)page, &resident) != 0) return 0;
    uintptr_t return_address = *(const uintptr_t *)sp;
    if (return_address == 0) return 0;
    memcpy(caller, interrupted, sizeof(*caller));
    caller->uc_mcontext.gregs[REG_RIP] = (greg_t)return_address;
    caller->uc_mcontext.gregs[REG_RSP] = (greg_t)(sp + sizeof(uintptr_t));
    *faulting_ip = ip;
    return 1;
#else
    (void)context; (void)caller; (void)faulting_ip;
    return 0;
#endif
}

// The unw_step loop: the head as walked, then a ring for the tail; counts every frame.
// After a call through an unmapped pointer the walk starts at the caller, the
// faulting address its first frame.
static void strain_walk_step(void *context, uintptr_t *frames, size_t capacity, strain_fault_walk *out) {
    size_t head_capacity = capacity / 2;
    size_t tail_capacity = capacity - head_capacity;
    unw_cursor_t cursor;
    size_t total = 0;
    uintptr_t first_sp = 0, last_sp = 0;
    int walk_end = -1;
    ucontext_t caller;
    uintptr_t faulting_ip = 0;
    int from_caller = strain_walk_unmapped_call(context, &caller, &faulting_ip);
    if (from_caller && frames != NULL && head_capacity > 0) {
        frames[0] = faulting_ip;
        first_sp = (uintptr_t)((const ucontext_t *)context)->uc_mcontext.gregs[REG_RSP];
        total = 1;
    }
    // The caller's address is a return address, not an interrupted instruction: no signal frame.
    int started = frames != NULL && (from_caller ? unw_init_local2(&cursor, (unw_context_t *)&caller, 0)
                                                 : unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME)) == 0;
    if (started) {
        do {
            unw_word_t ip = 0;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
            unw_word_t sp = 0;
            unw_get_reg(&cursor, UNW_REG_SP, &sp);
            last_sp = (uintptr_t)sp;
            if (total == 0) first_sp = (uintptr_t)sp;
            if (total < head_capacity) {
                frames[total] = (uintptr_t)ip;
            } else if (tail_capacity > 0) {
                frames[head_capacity + (total - head_capacity) % tail_capacity] = (uintptr_t)ip;
            }
            total++;
        } while ((walk_end = unw_step(&cursor)) > 0);
    }
    size_t tail = total > head_capacity ? total - head_capacity : 0;
    if (tail > tail_capacity) tail = tail_capacity;
    out->total = total;
    out->first_sp = first_sp;
    out->last_sp = last_sp;
    out->walk_end = walk_end;
    out->fast = 0;
    out->head = frames;
    out->head_count = total < head_capacity ? total : head_capacity;
    out->tail_count = tail;
    out->tail_ring = frames != NULL ? frames + head_capacity : NULL;
    out->tail_ring_capacity = tail_capacity;
    out->tail_first_slot = tail_capacity > 0 ? (total - tail - head_capacity) % tail_capacity : 0;
}

// The fast trace; NULL when it made the walk, otherwise why not.
__attribute__((noinline)) static const char *strain_walk_fast(void *context, size_t capacity, size_t fast_limit, strain_fault_walk *out) {
    if (!strain_walk_warm) return "thread not warmed";
    size_t room = strain_fast_capacity;
    if (fast_limit != 0 && fast_limit < room) room = fast_limit;
    if (strain_fast_frames == NULL || room == 0) return "no buffer";
    int traced = unw_backtrace((void **)strain_fast_frames, room > (size_t)0x7fffffff ? 0x7fffffff : (int)room);
    if (traced <= 0) return "no frames";
    if ((size_t)traced >= room) return "buffer full";
    const ucontext_t *interrupted = (const ucontext_t *)context;
    uintptr_t ip = (uintptr_t)interrupted->uc_mcontext.gregs[REG_RIP];
    uintptr_t sp = (uintptr_t)interrupted->uc_mcontext.gregs[REG_RSP];
    long skipped = -1;
    for (long i = 0; i < traced && i < STRAIN_SIGNAL_FRAME_SEARCH; i++) {
        if (strain_fast_frames[i] == ip) { skipped = i; break; }
    }
    if (skipped < 1) return "no signal frame";
    if (strain_fast_frames[traced - 1] != strain_walk_outermost_ip) return "stopped short";
    size_t total = (size_t)traced - (size_t)skipped;
    size_t head_capacity = capacity / 2;
    size_t tail_capacity = capacity - head_capacity;
    size_t head = total < head_capacity ? total : head_capacity;
    size_t tail = total - head;
    if (tail > tail_capacity) tail = tail_capacity;
    out->total = total;
    out->first_sp = sp;
    out->last_sp = strain_walk_outermost_sp;
    out->walk_end = strain_walk_outermost_end;
    out->fast = 1;
    out->head = strain_fast_frames + skipped;
    out->head_count = head;
    out->tail_count = tail;
    // The tail lies right where it was walked: a "ring" of exactly its own length.
    out->tail_ring = strain_fast_frames + skipped + (total - tail);
    out->tail_ring_capacity = tail;
    out->tail_first_slot = 0;
    return NULL;
}

void strain_walk_interrupted(void *context, uintptr_t *frames, size_t capacity, size_t fast_limit, strain_fault_walk *out) {
    memset(out, 0, sizeof(*out));
    ucontext_t caller;
    uintptr_t faulting_ip = 0;
    const char *fallback = atomic_load(&strain_prefer_step) ? "unw_step chosen"
        : strain_walk_unmapped_call(context, &caller, &faulting_ip) ? "call through an unmapped pointer"
        : strain_walk_fast(context, capacity, fast_limit, out);
    if (fallback == NULL) return;
    strain_walk_step(context, frames, capacity, out);
    out->fallback = fallback;
}

uintptr_t strain_fault_walk_frame(const strain_fault_walk *walk, size_t index) {
    if (index < walk->head_count) return walk->head[index];
    size_t at = index - walk->head_count;
    if (at >= walk->tail_count || walk->tail_ring_capacity == 0) return 0;
    return walk->tail_ring[(walk->tail_first_slot + at) % walk->tail_ring_capacity];
}

void strain_writer_walk_frames(strain_writer *writer, const strain_fault_walk *walk) {
    // `f 0x…\n` a frame, the same bytes as strain_writer_hex, formatted straight into
    // the buffer: at 131,000 frames the record's lines cost more than the fast walk.
    static const char digits[] = "0123456789abcdef";
    const size_t longest = 4 + 2 * sizeof(uintptr_t) + 1;
    size_t count = walk->head_count + walk->tail_count;
    for (size_t i = 0; i < count; i++) {
        if (writer->capacity - writer->used < longest) strain_writer_flush(writer);
        uintptr_t value = strain_fault_walk_frame(walk, i);
        int nibbles = value == 0 ? 1 : (int)((8 * sizeof(uintptr_t) - (size_t)__builtin_clzl(value) + 3) / 4);
        char *out = writer->buffer + writer->used;
        out[0] = 'f'; out[1] = ' '; out[2] = '0'; out[3] = 'x';
        for (int at = 4 + nibbles - 1; at >= 4; at--) {
            out[at] = digits[value & 0xf];
            value >>= 4;
        }
        out[4 + nibbles] = '\n';
        writer->used += (size_t)(5 + nibbles);
    }
}

#pragma clang attribute pop
