// The fault handler and the per-thread stack bookkeeping it relies on.
//
// Rules the handler keeps (it may run on any thread, at any instruction):
// - no malloc, no locks, no stdio: it formats numbers by hand into static buffers
//   and writes them with write(2);
// - it runs on the thread's alternate signal stack (SA_ONSTACK), prepared before
//   the work started, because an overflowed stack has no room left;
// - it records raw instruction pointers only (~0.7 µs a frame); the parent names
//   them after the child is gone (~55 µs a name would be far too slow here);
// - one fault is recorded per process: a second faulting thread waits to be
//   killed with the process.
#include "strain_probe.h"
#include "strain_internal.h"

// The same two lines as CLibunwind/shim.h: the system library target supplies
// the link flag (-lunwind), C includes the header directly.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STRAIN_ALTSTACK_SIZE (256 * 1024)
#define STRAIN_OUT_BUFFER_SIZE (64 * 1024)

// SIGSYS also carries the watchdog's dump requests (strain_watch.c).
static const int strain_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSYS};
#define STRAIN_SIGNAL_COUNT (sizeof(strain_signals) / sizeof(strain_signals[0]))

// Process-wide state, set up before any fault by strain_probe_install.
static int strain_record_fd = 2;
static uintptr_t *strain_frames;        // head half, then a ring for the tail half
static size_t strain_frame_capacity;
static atomic_int strain_capturing;
static volatile long strain_depth;
static volatile long strain_depth_max;
static char strain_out[STRAIN_OUT_BUFFER_SIZE];
static size_t strain_out_used;

// Per-thread state, filled by strain_thread_prepare outside the handler. The C
// target links into the executable, so these use a static TLS model and reading
// them in the handler does not allocate.
static __thread int strain_thread_ready;
static __thread strain_stack_bounds strain_thread_stack;

// MARK: - Async-signal-safe output

static void strain_flush(void) {
    size_t done = 0;
    while (done < strain_out_used) {
        ssize_t n = write(strain_record_fd, strain_out + done, strain_out_used - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;  // the reader is gone; nothing more can be said
        }
        done += (size_t)n;
    }
    strain_out_used = 0;
}

static void strain_put(const char *text, size_t length) {
    while (length > 0) {
        if (strain_out_used == STRAIN_OUT_BUFFER_SIZE) strain_flush();
        size_t room = STRAIN_OUT_BUFFER_SIZE - strain_out_used;
        size_t chunk = length < room ? length : room;
        memcpy(strain_out + strain_out_used, text, chunk);
        strain_out_used += chunk;
        text += chunk;
        length -= chunk;
    }
}

static void strain_put_string(const char *text) { strain_put(text, strlen(text)); }

static void strain_put_hex(uintptr_t value) {
    char digits[2 + 2 * sizeof(uintptr_t)];
    size_t at = sizeof(digits);
    do {
        digits[--at] = "0123456789abcdef"[value & 0xf];
        value >>= 4;
    } while (value != 0);
    digits[--at] = 'x';
    digits[--at] = '0';
    strain_put(digits + at, sizeof(digits) - at);
}

static void strain_put_decimal(long long value) {
    char digits[24];
    size_t at = sizeof(digits);
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[--at] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0) digits[--at] = '-';
    strain_put(digits + at, sizeof(digits) - at);
}

static void strain_put_field_hex(const char *name, uintptr_t value) {
    strain_put_string(name);
    strain_put(" ", 1);
    strain_put_hex(value);
    strain_put("\n", 1);
}

static void strain_put_field_decimal(const char *name, long long value) {
    strain_put_string(name);
    strain_put(" ", 1);
    strain_put_decimal(value);
    strain_put("\n", 1);
}

// Copies /proc/self/maps as it is at the fault, so the parent can map each
// address to its module and file offset. open/read/write are async-signal-safe.
static void strain_put_maps(void) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        strain_put(chunk, (size_t)n);
    }
    close(fd);
}

int strain_thread_id(void) { return (int)syscall(SYS_gettid); }

int strain_claim_result(void) {
    int expected = 0;
    return atomic_compare_exchange_strong(&strain_capturing, &expected, 1) ? 1 : 0;
}

uint64_t strain_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

// MARK: - The handler

// A fault counts as stack exhaustion when its address lies in the guard region
// under the thread's stack or just below it (a large frame can step over the
// guard), or in the last page of the stack itself, and the faulting frame's
// stack pointer is at the bottom of the stack too. The second condition keeps
// a wild pointer that happens to land under a stack (a data race freeing a
// buffer twice, say) from being called an overflow: there the stack pointer is
// still high up in the stack. A walk that could not read the stack pointer
// leaves the address alone to decide.
static int strain_is_overflow(uintptr_t address, uintptr_t sp) {
    if (!strain_thread_ready || address == 0) return 0;
    const uintptr_t low = strain_thread_stack.low;
    const size_t page = 4096;
    size_t below = strain_thread_stack.guard_size + 1024 * 1024;
    uintptr_t floor = low > below ? low - below : 0;
    if (!(address >= floor && address < low + page)) return 0;
    const size_t bottom = 64 * 1024;
    return sp == 0 || sp < low + bottom;
}

static void strain_fault_handler(int signal_number, siginfo_t *info, void *context) {
    if (signal_number == SIGSYS && strain_is_dump_request(info)) {
        strain_dump_answer(info, context);
        return;
    }
    uint64_t fault_ns = strain_monotonic_ns();
    int expected = 0;
    if (!atomic_compare_exchange_strong(&strain_capturing, &expected, 1)) {
        // Another thread is already writing a record (a fault, or the trial's
        // report, see strain_claim_result); it ends the process.
        for (;;) pause();
    }

    uintptr_t address = (uintptr_t)info->si_addr;

    // Walk from the interrupted frame. On x86-64 unw_context_t is a ucontext_t,
    // so the signal's context is the walk's starting point.
    unw_cursor_t cursor;
    size_t total = 0;
    size_t head_capacity = strain_frame_capacity / 2;
    size_t tail_capacity = strain_frame_capacity - head_capacity;
    uintptr_t first_sp = 0;
    if (strain_frames != NULL && unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip = 0;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
            if (total == 0) {
                unw_word_t sp = 0;
                unw_get_reg(&cursor, UNW_REG_SP, &sp);
                first_sp = (uintptr_t)sp;
            }
            if (total < head_capacity) {
                strain_frames[total] = (uintptr_t)ip;
            } else if (tail_capacity > 0) {
                strain_frames[head_capacity + (total - head_capacity) % tail_capacity] = (uintptr_t)ip;
            }
            total++;
        } while (unw_step(&cursor) > 0);
    }
    uint64_t walked_ns = strain_monotonic_ns();
    int overflow = (signal_number == SIGSEGV || signal_number == SIGBUS) && strain_is_overflow(address, first_sp);

    strain_put_string("STRAIN-FAULT 1\n");
    strain_put_field_decimal("signal", signal_number);
    strain_put_field_decimal("code", info->si_code);
    strain_put_field_hex("address", address);
    strain_put_field_hex("sp", first_sp);
    strain_put_field_decimal("tid", (long long)syscall(SYS_gettid));
    strain_put_field_decimal("overflow", overflow);
    strain_put_field_decimal("prepared", strain_thread_ready);
    if (strain_thread_ready) {
        strain_put_field_hex("stack_low", strain_thread_stack.low);
        strain_put_field_hex("stack_high", strain_thread_stack.high);
        strain_put_field_decimal("guard", (long long)strain_thread_stack.guard_size);
    }
    strain_put_field_decimal("depth", strain_depth);
    strain_put_field_decimal("frames_total", (long long)total);
    strain_put_field_decimal("walk_ns", (long long)(walked_ns - fault_ns));

    // Frames in call order from the fault: the head as walked, then the tail ring
    // unrolled from its oldest entry. Frames between them were counted, not kept.
    size_t head = total < head_capacity ? total : head_capacity;
    size_t tail = total > head_capacity ? total - head_capacity : 0;
    if (tail > tail_capacity) tail = tail_capacity;
    strain_put_field_decimal("frames_head", (long long)head);
    strain_put_field_decimal("frames_tail", (long long)tail);
    for (size_t i = 0; i < head; i++) {
        strain_put("f ", 2);
        strain_put_hex(strain_frames[i]);
        strain_put("\n", 1);
    }
    size_t tail_start = total - tail;  // index, in walk order, of the oldest kept tail frame
    for (size_t i = 0; i < tail; i++) {
        size_t walk_index = tail_start + i;
        strain_put("f ", 2);
        strain_put_hex(strain_frames[head_capacity + (walk_index - head_capacity) % tail_capacity]);
        strain_put("\n", 1);
    }
    strain_put_string("maps\n");
    strain_put_maps();
    strain_put_string("end-maps\n");
    strain_flush();
    strain_put_field_decimal("capture_ns", (long long)(strain_monotonic_ns() - fault_ns));
    strain_put_string("END\n");
    strain_flush();

    // Die of the same signal, so the parent sees how the child really ended.
    struct sigaction default_action;
    memset(&default_action, 0, sizeof(default_action));
    default_action.sa_handler = SIG_DFL;
    sigaction(signal_number, &default_action, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), signal_number);
    _exit(128 + signal_number);
}

// MARK: - Setup (ordinary code)

int strain_probe_install(int record_fd, size_t max_frames) {
    if (max_frames < 2) max_frames = 2;
    size_t bytes = max_frames * sizeof(uintptr_t);
    void *frames = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (frames == MAP_FAILED) return errno;
    strain_frames = frames;
    strain_frame_capacity = max_frames;
    strain_record_fd = record_fd;

    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, NULL);

    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = strain_fault_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < STRAIN_SIGNAL_COUNT; i++) {
        if (sigaction(strain_signals[i], &action, NULL) != 0) return errno;
    }
    return strain_thread_prepare();
}

size_t strain_probe_frame_capacity(void) { return strain_frame_capacity; }

int strain_thread_prepare(void) {
    if (strain_thread_ready) return 0;

    pthread_attr_t attributes;
    int status = pthread_getattr_np(pthread_self(), &attributes);
    if (status != 0) return status;
    void *stack_address = NULL;
    size_t stack_size = 0;
    size_t guard_size = 0;
    pthread_attr_getstack(&attributes, &stack_address, &stack_size);
    pthread_attr_getguardsize(&attributes, &guard_size);
    pthread_attr_destroy(&attributes);

    // The alternate stack has a PROT_NONE page below it, so a handler that ran
    // out of room faults visibly instead of writing over another mapping.
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *region = mmap(NULL, STRAIN_ALTSTACK_SIZE + page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return errno;
    mprotect(region, page, PROT_NONE);
    stack_t alternate;
    alternate.ss_sp = region + page;
    alternate.ss_size = STRAIN_ALTSTACK_SIZE;
    alternate.ss_flags = 0;
    if (sigaltstack(&alternate, NULL) != 0) {
        int error = errno;
        munmap(region, STRAIN_ALTSTACK_SIZE + page);
        return error;
    }

    strain_thread_stack.low = (uintptr_t)stack_address;
    strain_thread_stack.high = (uintptr_t)stack_address + stack_size;
    strain_thread_stack.guard_size = guard_size;
    strain_thread_ready = 1;
    return 0;
}

int strain_thread_bounds(strain_stack_bounds *out) {
    int status = strain_thread_prepare();
    if (status != 0) return status;
    *out = strain_thread_stack;
    return 0;
}

void strain_thread_reset_high_water(void) {
    if (strain_thread_prepare() != 0) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    // Keep two pages below this frame: the calls still to come use them.
    uintptr_t end = (here & ~(page - 1)) - 2 * page;
    uintptr_t start = (strain_thread_stack.low + page - 1) & ~(page - 1);
    if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
}

size_t strain_thread_stack_high_water(void) {
    if (strain_thread_prepare() != 0) return 0;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (strain_thread_stack.low + page - 1) & ~(page - 1);
    uintptr_t high = strain_thread_stack.high;
    unsigned char residency[64];
    // The main thread's stack grows on demand: its low part may not be mapped
    // yet. The mapped part is contiguous up to `high`, so a binary search finds
    // its lowest page in a dozen calls; below it nothing was touched.
    unsigned char one = 0;
    if (mincore((void *)start, page, &one) != 0) {
        uintptr_t unmapped = start, mapped = high - page;
        while (mapped - unmapped > page) {
            uintptr_t middle = (unmapped + (mapped - unmapped) / 2) & ~(page - 1);
            if (mincore((void *)middle, page, &one) == 0) mapped = middle; else unmapped = middle;
        }
        start = mapped;
    }
    // Scan upward in chunks for the lowest resident page; a chunk with unmapped
    // pages is scanned page by page, an unmapped page counting as untouched.
    for (uintptr_t chunk = start; chunk < high; chunk += 64 * page) {
        size_t pages = (high - chunk) / page;
        if (pages > 64) pages = 64;
        if (pages == 0) break;
        if (mincore((void *)chunk, pages * page, residency) == 0) {
            for (size_t i = 0; i < pages; i++) {
                if (residency[i] & 1) return (size_t)(high - (chunk + i * page));
            }
        } else {
            for (size_t i = 0; i < pages; i++) {
                if (mincore((void *)(chunk + i * page), page, &one) == 0 && (one & 1)) {
                    return (size_t)(high - (chunk + i * page));
                }
            }
        }
    }
    return 0;
}

// Depth marks are plain stores: the scenarios that mark depth recurse on one
// thread, and the handler reads the value on that same thread.
void strain_mark_depth(long depth) {
    strain_depth = depth;
    if (depth > strain_depth_max) strain_depth_max = depth;
}

long strain_depth_enter(void) {
    long depth = strain_depth + 1;
    strain_mark_depth(depth);
    return depth;
}

void strain_depth_leave(void) { strain_depth = strain_depth - 1; }

long strain_marked_depth(void) { return strain_depth; }

long strain_deepest_marked_depth(void) { return strain_depth_max; }

void strain_crash_null_dereference(void) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

int strain_set_stack_profile(size_t thread_stack_bytes, size_t main_stack_bytes) {
    if (main_stack_bytes != 0) {
        struct rlimit limit;
        if (getrlimit(RLIMIT_STACK, &limit) != 0) return errno;
        limit.rlim_cur = main_stack_bytes;
        if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < main_stack_bytes) limit.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_STACK, &limit) != 0) return errno;
    }
    if (thread_stack_bytes != 0) {
        pthread_attr_t attributes;
        int status = pthread_attr_init(&attributes);
        if (status != 0) return status;
        status = pthread_attr_setstacksize(&attributes, thread_stack_bytes);
        if (status == 0) status = pthread_setattr_default_np(&attributes);
        pthread_attr_destroy(&attributes);
        if (status != 0) return status;
    }
    return 0;
}

int strain_thread_count(void) {
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char text[4096];
    ssize_t length = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (length <= 0) return -1;
    text[length] = 0;
    const char *line = strstr(text, "\nThreads:");
    if (line == NULL) return -1;
    return atoi(line + strlen("\nThreads:"));
}

// MARK: - Demangling (ordinary code, used by the parent's symbolizer)

// Exported by the Swift runtime (libswiftCore) and by libstdc++ respectively.
extern char *swift_demangle(const char *mangled, size_t length, char *buffer, size_t *buffer_size, uint32_t flags);
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

char *strain_demangle_swift(const char *name) {
    if (name == NULL) return NULL;
    return swift_demangle(name, strlen(name), NULL, NULL, 0);
}

char *strain_demangle_cxx(const char *name) {
    if (name == NULL || strncmp(name, "_Z", 2) != 0) return NULL;
    int status = 0;
    char *result = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? result : NULL;
}
