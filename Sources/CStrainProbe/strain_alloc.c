// Allocation counting: the malloc family, defined here so that it interposes
// libc's process-wide (ELF symbol interposition: `strain` links this target
// statically, so its definitions come before libc.so's for every module,
// libswiftCore's swift_slowAlloc included). Each one forwards to the next
// definition in lookup order: an allocator the user preloads (jemalloc through
// LD_PRELOAD) still runs, counted, else glibc's (see "The allocator these
// interposers forward to" below: how the first call resolves it safely).
//
// Rules these functions keep (they run inside every allocation of the process,
// on any thread, before and after the probe is installed):
// - off (the default), the cost is one load and one predictable branch;
// - on, they never allocate, never lock and never block: counters live in a
//   fixed table of per-thread slots (BSS, 64-byte aligned so two threads never
//   share a line). A slot owned by one thread is updated with plain relaxed
//   loads and stores (no lock prefix: measured, three locked adds per allocation
//   cost a contended, allocating loop about a fifth of its throughput); threads
//   past the owned slots share the last one, updated with atomic adds, which
//   stays exact;
// - the call site is the first return address outside the Swift runtime and
//   Foundation, found by following frame pointers only through those modules,
//   which keep them (libswiftCore, libFoundation*, libswift_Concurrency: checked
//   with objdump; Strain's own -O code and glibc do not, so the walk stops at
//   their first frame, never reads through one);
// - a site that finds no room in its slot's table is counted as unplaced, never dropped.
#include "strain_probe.h"

// Strain's own C runs in signal handlers, in the allocator's interposers and before a
// sanitizer's runtime has started (`swift test --sanitize=thread` instruments C targets
// too): never instrumented, as the harness is not what a sanitizer should watch.
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

// glibc's own allocator, exported for exactly this use (malloc interposers): what
// the family falls back to when the next allocator is not whole (see below).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

// In a process built with ThreadSanitizer or AddressSanitizer (`-Xswiftc -sanitize=thread`
// links the runtime into strain; a sanitized program under `strain exec` exports it) the
// sanitizer owns the heap: its allocator records every block, and a block it did not
// hand out breaks it (a TSan build of strain died in free with SEGV when these
// interposers went to glibc). Weak references: NULL where no sanitizer is linked.
extern void *__interceptor_malloc(size_t size) __attribute__((weak));
extern void *__interceptor_calloc(size_t count, size_t size) __attribute__((weak));
extern void *__interceptor_realloc(void *pointer, size_t size) __attribute__((weak));
extern void __interceptor_free(void *pointer) __attribute__((weak));
extern void *__interceptor_memalign(size_t alignment, size_t size) __attribute__((weak));
extern size_t __sanitizer_get_allocated_size(const volatile void *pointer) __attribute__((weak));

// MARK: - The allocator these interposers forward to
//
// The next definition of each function in lookup order (dlsym(RTLD_NEXT)): the
// allocator the environment chose (jemalloc, mimalloc, tcmalloc through LD_PRELOAD,
// which the executable's own definitions would otherwise hide), else glibc's; the
// sanitizer's where one is linked. Resolved once, by the first call of any member
// (which can come before any constructor, from the loader or libc's start-up), and
// inherited by a fork: a trial server's copies forward where the server does.
//
// - Every member goes to one allocator: each must be defined by the library that
//   defines the next malloc (checked with dladdr). A library that lacks one (a
//   malloc without memalign) is not forwarded to at all: the family stays whole on
//   glibc's, and `strain_alloc_forwarding` says what was missing (`strain run`
//   refuses such a library, since its other members would mix allocators).
// - dlsym may allocate (its error buffer): a call made by the resolving thread while
//   it resolves is served from a static bootstrap arena, never freed (free and realloc
//   recognise its blocks). Only the loader's own code receives those blocks.
// - Another thread that calls in while the first resolves waits for it (yielding);
//   after, each call is one load of the resolved pointer and a jump: the same as the
//   direct call to glibc's entry point it replaces (a load of the weak sanitizer
//   reference, a branch, a call through the GOT).
// - malloc_usable_size is defined here too, forwarded with the rest: Swift's runtime
//   asks it of the blocks it allocates (an array's capacity), and a preloaded
//   library's, asked of a block glibc handed out, crashed strain (jemalloc 5.3: SEGV
//   in `strain run`, before this forwarding).
// - valloc and pvalloc are not defined here: they resolve as they would without
//   Strain (to the preloaded library's where it has them; jemalloc 5.3 has no pvalloc).

typedef void *(*strain_alloc_malloc_fn)(size_t);
typedef void *(*strain_alloc_calloc_fn)(size_t, size_t);
typedef void *(*strain_alloc_realloc_fn)(void *, size_t);
typedef void (*strain_alloc_free_fn)(void *);
typedef void *(*strain_alloc_memalign_fn)(size_t, size_t);
typedef int (*strain_alloc_posix_memalign_fn)(void **, size_t, size_t);
typedef size_t (*strain_alloc_usable_fn)(void *);

static void *strain_alloc_first_malloc(size_t size);
static void *strain_alloc_first_calloc(size_t count, size_t size);
static void *strain_alloc_first_realloc(void *pointer, size_t size);
static void strain_alloc_first_free(void *pointer);
static void *strain_alloc_first_memalign(size_t alignment, size_t size);
static int strain_alloc_first_posix_memalign(void **out, size_t alignment, size_t size);
static void *strain_alloc_first_aligned_alloc(size_t alignment, size_t size);
static size_t strain_alloc_first_usable(void *pointer);

// Until resolved, each points at a function that resolves the family, then forwards.
// Atomics read relaxed (a plain load on x86-64): a thread that still sees the first
// function goes through it and waits for the resolution with acquire.
static _Atomic strain_alloc_malloc_fn strain_next_malloc = strain_alloc_first_malloc;
static _Atomic strain_alloc_calloc_fn strain_next_calloc = strain_alloc_first_calloc;
static _Atomic strain_alloc_realloc_fn strain_next_realloc = strain_alloc_first_realloc;
static _Atomic strain_alloc_free_fn strain_next_free = strain_alloc_first_free;
static _Atomic strain_alloc_memalign_fn strain_next_memalign = strain_alloc_first_memalign;
static _Atomic strain_alloc_posix_memalign_fn strain_next_posix_memalign = strain_alloc_first_posix_memalign;
static _Atomic strain_alloc_memalign_fn strain_next_aligned_alloc = strain_alloc_first_aligned_alloc;
static _Atomic strain_alloc_usable_fn strain_next_usable = strain_alloc_first_usable;

#define STRAIN_NEXT(name) atomic_load_explicit(&strain_next_##name, memory_order_relaxed)

// 0: not resolved, 1: a thread resolves, 2: resolved.
static _Atomic int strain_alloc_resolution;
// Initial-exec TLS: no __tls_get_addr (which may allocate) in libStrainProbe.so either.
#define STRAIN_ALLOC_TLS __thread __attribute__((tls_model("initial-exec")))
static STRAIN_ALLOC_TLS int strain_alloc_resolving;
// The library the family forwards to (its path as the loader knows it), and what it lacked.
static const char *strain_alloc_library;
static char strain_alloc_missing[160];

// The bootstrap arena: blocks for the resolving thread's calls, each after a 16-byte
// header that holds its size. Never reused, so its blocks stay zero until written.
#define STRAIN_ALLOC_ARENA_BYTES (64 * 1024)
static unsigned char strain_alloc_arena[STRAIN_ALLOC_ARENA_BYTES] __attribute__((aligned(64)));
static size_t strain_alloc_arena_used;

static inline int strain_alloc_in_arena(const void *pointer) {
    return (uintptr_t)pointer - (uintptr_t)strain_alloc_arena < STRAIN_ALLOC_ARENA_BYTES;
}

static void *strain_alloc_arena_take(size_t alignment, size_t size) {
    if (alignment < 16) alignment = 16;
    if ((alignment & (alignment - 1)) != 0 || alignment > 4096 || size > STRAIN_ALLOC_ARENA_BYTES) return NULL;
    uintptr_t base = (uintptr_t)strain_alloc_arena;
    uintptr_t start = (base + strain_alloc_arena_used + 16 + alignment - 1) & ~(uintptr_t)(alignment - 1);
    if (start + size > base + STRAIN_ALLOC_ARENA_BYTES) return NULL;
    ((size_t *)start)[-1] = size;
    strain_alloc_arena_used = start + size - base;
    return (void *)start;
}

// The sanitizer's family, whole: posix_memalign and aligned_alloc through its memalign.
static int strain_alloc_sanitizer_posix_memalign(void **out, size_t alignment, size_t size) {
    void *block = __interceptor_memalign(alignment, size);
    if (block == NULL) return ENOMEM;
    *out = block;
    return 0;
}

static size_t strain_alloc_sanitizer_usable(void *pointer) {
    return pointer == NULL ? 0 : __sanitizer_get_allocated_size(pointer);
}

// glibc's fallback family: the same through __libc_memalign (the arguments are checked by the interposers).
static int strain_alloc_libc_posix_memalign(void **out, size_t alignment, size_t size) {
    void *block = __libc_memalign(alignment, size);
    if (block == NULL) return ENOMEM;
    *out = block;
    return 0;
}

static void strain_alloc_publish(strain_alloc_malloc_fn m, strain_alloc_calloc_fn c, strain_alloc_realloc_fn r, strain_alloc_free_fn f,
                                 strain_alloc_memalign_fn ma, strain_alloc_posix_memalign_fn pm, strain_alloc_memalign_fn aa,
                                 strain_alloc_usable_fn u) {
    atomic_store_explicit(&strain_next_usable, u, memory_order_relaxed);
    atomic_store_explicit(&strain_next_malloc, m, memory_order_relaxed);
    atomic_store_explicit(&strain_next_calloc, c, memory_order_relaxed);
    atomic_store_explicit(&strain_next_realloc, r, memory_order_relaxed);
    atomic_store_explicit(&strain_next_free, f, memory_order_relaxed);
    atomic_store_explicit(&strain_next_memalign, ma, memory_order_relaxed);
    atomic_store_explicit(&strain_next_posix_memalign, pm, memory_order_relaxed);
    atomic_store_explicit(&strain_next_aligned_alloc, aa, memory_order_relaxed);
}

/// Finds the next allocator and publishes it (once per process; a fork inherits it).
/// Defined only by the preloaded probe (CStrainPreload): a program under `strain exec`.
extern const int strain_preload_library __attribute__((weak));

static __attribute__((noinline)) void strain_alloc_resolve(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&strain_alloc_resolution, &expected, 1, memory_order_acq_rel, memory_order_acquire)) {
        while (atomic_load_explicit(&strain_alloc_resolution, memory_order_acquire) != 2) sched_yield();
        return;
    }
    strain_alloc_resolving = 1;
    if (__interceptor_malloc != NULL) {
        strain_alloc_library = "sanitizer";
        strain_alloc_usable_fn usable = __sanitizer_get_allocated_size != NULL ? strain_alloc_sanitizer_usable
                                                                              : (strain_alloc_usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
        strain_alloc_publish(__interceptor_malloc, __interceptor_calloc, __interceptor_realloc, __interceptor_free, __interceptor_memalign,
                             strain_alloc_sanitizer_posix_memalign, __interceptor_memalign, usable);
    } else {
        static const char *const names[] = {"malloc", "calloc", "realloc", "free", "memalign", "posix_memalign", "aligned_alloc",
                                            "malloc_usable_size"};
        void *found[8];
        Dl_info home = {0}, info;
        size_t used = 0;
        for (int index = 0; index < 8; index++) {
            found[index] = dlsym(RTLD_NEXT, names[index]);
            int placed = found[index] != NULL && dladdr(found[index], &info) != 0;
            if (index == 0 && placed) home = info;
            if (placed && info.dli_fbase == home.dli_fbase) continue;
            // Missing, or another library's: named, and the whole family goes to glibc's.
            int length = snprintf(strain_alloc_missing + used, sizeof(strain_alloc_missing) - used, "%s%s", used ? ", " : "", names[index]);
            if (length > 0 && used + (size_t)length < sizeof(strain_alloc_missing)) used += (size_t)length;
        }
        if (used == 0) {
            strain_alloc_library = home.dli_fname;
            strain_alloc_publish((strain_alloc_malloc_fn)found[0], (strain_alloc_calloc_fn)found[1], (strain_alloc_realloc_fn)found[2],
                                 (strain_alloc_free_fn)found[3], (strain_alloc_memalign_fn)found[4], (strain_alloc_posix_memalign_fn)found[5],
                                 (strain_alloc_memalign_fn)found[6], (strain_alloc_usable_fn)found[7]);
        } else if (&strain_preload_library != NULL) {
            // A family that is not whole: each function forwards to its own next definition,
            // where the program's call would go without Strain (the library's malloc, glibc's
            // posix_memalign), counted: under strain exec the program keeps the allocators it
            // chose. Trials refuse such a preload before anything runs (TrialAllocator.refusal:
            // Strain's own runtime would mix the two allocators' blocks).
            void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
            void *usable = found[7] != NULL ? found[7] : (libc != NULL ? dlsym(libc, "malloc_usable_size") : NULL);
            strain_alloc_library = home.dli_fname;
            strain_alloc_publish(found[0] != NULL ? (strain_alloc_malloc_fn)found[0] : __libc_malloc,
                                 found[1] != NULL ? (strain_alloc_calloc_fn)found[1] : __libc_calloc,
                                 found[2] != NULL ? (strain_alloc_realloc_fn)found[2] : __libc_realloc,
                                 found[3] != NULL ? (strain_alloc_free_fn)found[3] : __libc_free,
                                 found[4] != NULL ? (strain_alloc_memalign_fn)found[4] : __libc_memalign,
                                 found[5] != NULL ? (strain_alloc_posix_memalign_fn)found[5] : strain_alloc_libc_posix_memalign,
                                 found[6] != NULL ? (strain_alloc_memalign_fn)found[6] : __libc_memalign, (strain_alloc_usable_fn)usable);
        } else {
            // In strain itself and a trial (which refuse to run such a preload): glibc's whole
            // family, so strain lives long enough to say why. glibc's own malloc_usable_size
            // (it exports no __libc_ name for it): from libc.so.6's own scope.
            void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
            void *usable = libc != NULL ? dlsym(libc, "malloc_usable_size") : NULL;
            strain_alloc_library = home.dli_fname;
            strain_alloc_publish(__libc_malloc, __libc_calloc, __libc_realloc, __libc_free, __libc_memalign, strain_alloc_libc_posix_memalign,
                                 __libc_memalign, usable != NULL ? (strain_alloc_usable_fn)usable : (strain_alloc_usable_fn)found[7]);
        }
    }
    strain_alloc_resolving = 0;
    atomic_store_explicit(&strain_alloc_resolution, 2, memory_order_release);
}

// The first calls: from the resolving thread itself, the arena; otherwise resolve, then forward.

static void *strain_alloc_first_malloc(size_t size) {
    if (strain_alloc_resolving) return strain_alloc_arena_take(16, size);
    strain_alloc_resolve();
    return STRAIN_NEXT(malloc)(size);
}

static void *strain_alloc_first_calloc(size_t count, size_t size) {
    if (strain_alloc_resolving) {
        size_t bytes;
        return __builtin_mul_overflow(count, size, &bytes) ? NULL : strain_alloc_arena_take(16, bytes);
    }
    strain_alloc_resolve();
    return STRAIN_NEXT(calloc)(count, size);
}

static void *strain_alloc_first_realloc(void *pointer, size_t size) {
    if (strain_alloc_resolving) {
        // Only arena blocks exist yet on this thread's side of the resolution.
        void *block = strain_alloc_arena_take(16, size);
        if (block != NULL && pointer != NULL && strain_alloc_in_arena(pointer)) {
            size_t old = ((size_t *)pointer)[-1];
            memcpy(block, pointer, old < size ? old : size);
        }
        return block;
    }
    strain_alloc_resolve();
    return STRAIN_NEXT(realloc)(pointer, size);
}

static void strain_alloc_first_free(void *pointer) {
    if (strain_alloc_resolving) return;  // an arena block (nothing else was handed out before the resolution)
    strain_alloc_resolve();
    STRAIN_NEXT(free)(pointer);
}

static void *strain_alloc_first_memalign(size_t alignment, size_t size) {
    if (strain_alloc_resolving) return strain_alloc_arena_take(alignment, size);
    strain_alloc_resolve();
    return STRAIN_NEXT(memalign)(alignment, size);
}

static int strain_alloc_first_posix_memalign(void **out, size_t alignment, size_t size) {
    if (strain_alloc_resolving) {
        void *block = strain_alloc_arena_take(alignment, size);
        if (block == NULL) return ENOMEM;
        *out = block;
        return 0;
    }
    strain_alloc_resolve();
    return STRAIN_NEXT(posix_memalign)(out, alignment, size);
}

static void *strain_alloc_first_aligned_alloc(size_t alignment, size_t size) {
    if (strain_alloc_resolving) return strain_alloc_arena_take(alignment, size);
    strain_alloc_resolve();
    return STRAIN_NEXT(aligned_alloc)(alignment, size);
}

static size_t strain_alloc_first_usable(void *pointer) {
    if (strain_alloc_resolving) return strain_alloc_in_arena(pointer) ? ((size_t *)pointer)[-1] : 0;
    strain_alloc_resolve();
    return STRAIN_NEXT(usable)(pointer);
}

/// realloc of a bootstrap block: a new block from the allocator, the old one's bytes copied.
static __attribute__((noinline)) void *strain_alloc_realloc_arena_block(void *pointer, size_t size) {
    size_t old = ((size_t *)pointer)[-1];
    if (size == 0) return NULL;
    void *block = STRAIN_NEXT(malloc)(size);
    if (block != NULL) memcpy(block, pointer, old < size ? old : size);
    return block;
}

static inline void *strain_real_realloc(void *pointer, size_t size) {
    if (__builtin_expect(strain_alloc_in_arena(pointer), 0)) return strain_alloc_realloc_arena_block(pointer, size);
    return STRAIN_NEXT(realloc)(pointer, size);
}

static inline void strain_real_free(void *pointer) {
    if (__builtin_expect(strain_alloc_in_arena(pointer), 0)) return;
    STRAIN_NEXT(free)(pointer);
}

#define STRAIN_ALLOC_SLOTS 64
#define STRAIN_ALLOC_SITES_PER_SLOT 256
#define STRAIN_ALLOC_PROBES 16
#define STRAIN_ALLOC_RANGES 16
// Frames the walk follows through runtime modules before it settles on a return address.
#define STRAIN_ALLOC_WALK_LIMIT 12
// A caller's frame lies above the callee's and, in the runtime, close by.
#define STRAIN_ALLOC_FRAME_WINDOW (256 * 1024)

typedef struct {
    _Atomic uintptr_t address;
    _Atomic uint64_t allocations;
    _Atomic uint64_t bytes;
} strain_alloc_site_slot;

typedef struct {
    _Atomic uint64_t allocations;
    _Atomic uint64_t bytes;
    _Atomic uint64_t frees;
    _Atomic uint64_t unplaced;
    strain_alloc_site_slot sites[STRAIN_ALLOC_SITES_PER_SLOT];
} __attribute__((aligned(64))) strain_alloc_slot;

static strain_alloc_slot strain_alloc_slots[STRAIN_ALLOC_SLOTS];
static _Atomic int strain_alloc_counting;
static _Atomic unsigned strain_alloc_next_slot;
static _Atomic int strain_alloc_by_site = 1;

// Text ranges of the modules the walk may pass through (filled by strain_alloc_begin).
static uintptr_t strain_alloc_range_low[STRAIN_ALLOC_RANGES];
static uintptr_t strain_alloc_range_high[STRAIN_ALLOC_RANGES];
static int strain_alloc_range_count;

static STRAIN_ALLOC_TLS unsigned strain_alloc_thread_slot;  // slot index + 1, 0 before the first count
static STRAIN_ALLOC_TLS int strain_alloc_thread_excluded;

static inline int strain_alloc_in_runtime(uintptr_t address) {
    for (int index = 0; index < strain_alloc_range_count; index++) {
        if (address >= strain_alloc_range_low[index] && address < strain_alloc_range_high[index]) return 1;
    }
    return 0;
}

/// The first return address outside the runtime modules, from the frame of a
/// counting function (always inlined into it: `frame` is its own, which stands in
/// its interposer's place). A garbage frame pointer (a runtime function that did
/// not keep one) is caught by the checks only as far as they go: above the
/// current frame, within 256 KiB, aligned; the walk only ever follows frames of
/// modules that keep frame pointers.
static inline __attribute__((always_inline)) uintptr_t strain_alloc_site(uintptr_t *frame, uintptr_t address) {
    for (int step = 0; step < STRAIN_ALLOC_WALK_LIMIT && strain_alloc_in_runtime(address); step++) {
        uintptr_t *caller = (uintptr_t *)frame[0];
        // Only a frame pointer the runtime kept: above this frame, close by, aligned.
        if ((uintptr_t)caller <= (uintptr_t)frame || (uintptr_t)caller - (uintptr_t)frame > STRAIN_ALLOC_FRAME_WINDOW
            || ((uintptr_t)caller & 7) != 0) break;
        frame = caller;
        uintptr_t next = frame[1];
        if (next == 0) break;
        address = next;
    }
    return address;
}

// The last slot is shared by every thread that came after the owned ones ran out.
#define STRAIN_ALLOC_SHARED_SLOT (STRAIN_ALLOC_SLOTS - 1)

/// Adds `value` to a counter of `slot`: a plain add in an owned slot, an atomic one in the shared slot.
static inline void strain_alloc_add(strain_alloc_slot *slot, _Atomic uint64_t *counter, uint64_t value) {
    if (slot == &strain_alloc_slots[STRAIN_ALLOC_SHARED_SLOT]) {
        atomic_fetch_add_explicit(counter, value, memory_order_relaxed);
    } else {
        atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + value, memory_order_relaxed);
    }
}

static inline strain_alloc_slot *strain_alloc_thread(void) {
    unsigned slot = strain_alloc_thread_slot;
    if (__builtin_expect(slot == 0, 0)) {
        unsigned next = atomic_fetch_add_explicit(&strain_alloc_next_slot, 1, memory_order_relaxed);
        slot = (next < STRAIN_ALLOC_SHARED_SLOT ? next : STRAIN_ALLOC_SHARED_SLOT) + 1;
        strain_alloc_thread_slot = slot;
    }
    return &strain_alloc_slots[slot - 1];
}

static inline void strain_alloc_place(strain_alloc_slot *slot, uintptr_t site, size_t size) {
    uintptr_t hash = (site >> 2) * 0x9E3779B97F4A7C15ull;
    unsigned start = (unsigned)(hash >> 56) % STRAIN_ALLOC_SITES_PER_SLOT;
    for (unsigned probe = 0; probe < STRAIN_ALLOC_PROBES; probe++) {
        strain_alloc_site_slot *entry = &slot->sites[(start + probe) % STRAIN_ALLOC_SITES_PER_SLOT];
        uintptr_t held = atomic_load_explicit(&entry->address, memory_order_relaxed);
        if (held == 0) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(&entry->address, &expected, site, memory_order_relaxed, memory_order_relaxed)) {
                held = site;
            } else {
                held = expected;
            }
        }
        if (held == site) {
            strain_alloc_add(slot, &entry->allocations, 1);
            strain_alloc_add(slot, &entry->bytes, size);
            return;
        }
    }
    strain_alloc_add(slot, &slot->unplaced, 1);
}

/// Counts one allocation of `size` bytes made from `site` (counting is on).
static __attribute__((noinline)) void strain_alloc_count(uintptr_t site, size_t size) {
    if (strain_alloc_thread_excluded) return;
    strain_alloc_slot *slot = strain_alloc_thread();
    strain_alloc_add(slot, &slot->allocations, 1);
    strain_alloc_add(slot, &slot->bytes, size);
    if (atomic_load_explicit(&strain_alloc_by_site, memory_order_relaxed)) strain_alloc_place(slot, site, size);
}

static __attribute__((noinline)) void strain_alloc_count_free(void) {
    if (strain_alloc_thread_excluded) return;
    strain_alloc_slot *slot = strain_alloc_thread();
    strain_alloc_add(slot, &slot->frees, 1);
}

#define STRAIN_ALLOC_ON() __builtin_expect(atomic_load_explicit(&strain_alloc_counting, memory_order_relaxed), 0)
// Called from the interposer's own frame (the counted functions are reached by a
// guaranteed tail call, so their return address is the interposer's caller's).
#define STRAIN_ALLOC_SITE() \
    strain_alloc_site((uintptr_t *)__builtin_frame_address(0), (uintptr_t)__builtin_return_address(0))
#define STRAIN_ALLOC_EXPORT __attribute__((visibility("default")))
#define STRAIN_ALLOC_COUNTED static __attribute__((noinline))

// The counting halves. Each has its interposer's signature and is entered by a
// musttail jump, so it runs in the interposer's place: its frame pointer and
// return address are those the interposer would have had. (A counting path left
// inside the interposer is outlined by LLVM's hot/cold splitting into a function
// of its own, which then finds its own return address, inside the interposer.)

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_malloc(size_t size) {
    strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    return STRAIN_NEXT(malloc)(size);
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_calloc(size_t count, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) bytes = SIZE_MAX;
    strain_alloc_count(STRAIN_ALLOC_SITE(), bytes);
    return STRAIN_NEXT(calloc)(count, size);
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_realloc(void *pointer, size_t size) {
    if (size != 0 || pointer == NULL) strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    if (pointer != NULL) strain_alloc_count_free();
    return strain_real_realloc(pointer, size);
}

STRAIN_ALLOC_COUNTED int strain_alloc_counted_posix_memalign(void **out, size_t alignment, size_t size) {
    strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    return STRAIN_NEXT(posix_memalign)(out, alignment, size);
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_memalign(size_t alignment, size_t size) {
    strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    return STRAIN_NEXT(memalign)(alignment, size);
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_aligned_alloc(size_t alignment, size_t size) {
    strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    return STRAIN_NEXT(aligned_alloc)(alignment, size);
}

// The interposers: off, one load and one predictable branch before the allocator's
// own entry point (free and realloc: one compare more, for the bootstrap arena's blocks).

STRAIN_ALLOC_EXPORT void *malloc(size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_malloc(size);
    return STRAIN_NEXT(malloc)(size);
}

STRAIN_ALLOC_EXPORT void *calloc(size_t count, size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_calloc(count, size);
    return STRAIN_NEXT(calloc)(count, size);
}

/// Counted as what it does: a new block (an allocation of `size`) and, when
/// `pointer` was one, the old block's free; `realloc(p, 0)` is a free alone.
STRAIN_ALLOC_EXPORT void *realloc(void *pointer, size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_realloc(pointer, size);
    return strain_real_realloc(pointer, size);
}

STRAIN_ALLOC_EXPORT void free(void *pointer) {
    if (STRAIN_ALLOC_ON() && pointer != NULL) strain_alloc_count_free();
    strain_real_free(pointer);
}

STRAIN_ALLOC_EXPORT int posix_memalign(void **out, size_t alignment, size_t size) {
    // glibc's checks (a power of two, a multiple of sizeof(void *)), so a refused call is never counted.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_posix_memalign(out, alignment, size);
    return STRAIN_NEXT(posix_memalign)(out, alignment, size);
}

STRAIN_ALLOC_EXPORT void *aligned_alloc(size_t alignment, size_t size) {
    // glibc 2.36 accepts any power of two here (and rejects the rest with EINVAL).
    if ((alignment & (alignment - 1)) != 0 || alignment == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_aligned_alloc(alignment, size);
    return STRAIN_NEXT(aligned_alloc)(alignment, size);
}

STRAIN_ALLOC_EXPORT void *memalign(size_t alignment, size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_memalign(alignment, size);
    return STRAIN_NEXT(memalign)(alignment, size);
}

/// Not counted: the size the allocator gave a block (Swift's runtime asks it of its own).
STRAIN_ALLOC_EXPORT size_t malloc_usable_size(void *pointer) {
    if (__builtin_expect(strain_alloc_in_arena(pointer), 0)) return ((size_t *)pointer)[-1];
    return STRAIN_NEXT(usable)(pointer);
}

// MARK: - Control (ordinary code)

static int strain_alloc_note_module(struct dl_phdr_info *info, size_t size, void *unused) {
    (void)size;
    (void)unused;
    const char *name = info->dlpi_name;
    if (name == NULL) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    static const char *const walked[] = {"libswiftCore.so", "libFoundation.so", "libFoundationEssentials.so",
                                         "libFoundationInternationalization.so", "libswift_Concurrency.so",
                                         "libswiftSynchronization.so"};
    int match = 0;
    for (size_t index = 0; index < sizeof(walked) / sizeof(walked[0]); index++) {
        if (strcmp(base, walked[index]) == 0) match = 1;
    }
    if (!match) return 0;
    for (int header = 0; header < info->dlpi_phnum; header++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[header];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X)) continue;
        if (strain_alloc_range_count == STRAIN_ALLOC_RANGES) return 1;
        strain_alloc_range_low[strain_alloc_range_count] = info->dlpi_addr + segment->p_vaddr;
        strain_alloc_range_high[strain_alloc_range_count] = info->dlpi_addr + segment->p_vaddr + segment->p_memsz;
        strain_alloc_range_count++;
    }
    return 0;
}

void strain_alloc_begin(int by_site) {
    atomic_store_explicit(&strain_alloc_counting, 0, memory_order_seq_cst);
    strain_alloc_range_count = 0;
    dl_iterate_phdr(strain_alloc_note_module, NULL);
    unsigned used = atomic_load_explicit(&strain_alloc_next_slot, memory_order_relaxed);
    // Only the slots threads have taken hold anything (all of them once they ran out).
    size_t slots = used < STRAIN_ALLOC_SLOTS ? used : STRAIN_ALLOC_SLOTS;
    memset(strain_alloc_slots, 0, slots * sizeof(strain_alloc_slot));
    atomic_store_explicit(&strain_alloc_by_site, by_site, memory_order_relaxed);
    atomic_store_explicit(&strain_alloc_counting, 1, memory_order_seq_cst);
}

void strain_alloc_end(void) {
    atomic_store_explicit(&strain_alloc_counting, 0, memory_order_seq_cst);
}

int strain_alloc_is_counting(void) {
    return atomic_load_explicit(&strain_alloc_counting, memory_order_relaxed);
}

void strain_alloc_exclude_thread(void) {
    strain_alloc_thread_excluded = 1;
}

strain_alloc_totals strain_alloc_read_totals(void) {
    strain_alloc_totals totals = {0, 0, 0, 0};
    for (int index = 0; index < STRAIN_ALLOC_SLOTS; index++) {
        strain_alloc_slot *slot = &strain_alloc_slots[index];
        totals.allocations += atomic_load_explicit(&slot->allocations, memory_order_relaxed);
        totals.bytes += atomic_load_explicit(&slot->bytes, memory_order_relaxed);
        totals.frees += atomic_load_explicit(&slot->frees, memory_order_relaxed);
        totals.unplaced += atomic_load_explicit(&slot->unplaced, memory_order_relaxed);
    }
    return totals;
}

size_t strain_alloc_read_sites(strain_alloc_site_count *out, size_t capacity) {
    size_t written = 0;
    unsigned used = atomic_load_explicit(&strain_alloc_next_slot, memory_order_relaxed);
    int slots = used < STRAIN_ALLOC_SLOTS ? (int)used : STRAIN_ALLOC_SLOTS;
    for (int index = 0; index < slots; index++) {
        for (int site = 0; site < STRAIN_ALLOC_SITES_PER_SLOT; site++) {
            strain_alloc_site_slot *entry = &strain_alloc_slots[index].sites[site];
            uintptr_t address = atomic_load_explicit(&entry->address, memory_order_relaxed);
            if (address == 0) continue;
            if (written == capacity) return written;
            out[written].address = address;
            out[written].allocations = atomic_load_explicit(&entry->allocations, memory_order_relaxed);
            out[written].bytes = atomic_load_explicit(&entry->bytes, memory_order_relaxed);
            written++;
        }
    }
    return written;
}

int strain_alloc_write_totals(int fd) {
    strain_alloc_totals totals = strain_alloc_read_totals();
    char text[160];
    int length = snprintf(text, sizeof(text), "allocations %llu\nbytes %llu\nfrees %llu\n", (unsigned long long)totals.allocations,
                          (unsigned long long)totals.bytes, (unsigned long long)totals.frees);
    if (fd < 0) return EBADF;
    ssize_t written = write(fd, text, (size_t)length);
    int status = written == length ? 0 : (written < 0 ? errno : EIO);
    close(fd);
    return status;
}

const char *strain_alloc_forwarding(const char **missing) {
    // Resolved by the process's first allocation; a call here before it (none in practice) resolves.
    if (atomic_load_explicit(&strain_alloc_resolution, memory_order_acquire) != 2) strain_alloc_resolve();
    if (missing != NULL) *missing = strain_alloc_missing[0] != 0 ? strain_alloc_missing : NULL;
    return strain_alloc_library;
}

int strain_alloc_is_interposing(void) {
    // The malloc the process resolves is this file's, not an allocator of the program's own.
    return dlsym(RTLD_DEFAULT, "malloc") == (void *)malloc;
}

typedef struct {
    uintptr_t address;
    char *out;
    size_t capacity;
    int written;
} strain_alloc_mapping_query;

static int strain_alloc_find_mapping(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    strain_alloc_mapping_query *query = data;
    for (int header = 0; header < info->dlpi_phnum; header++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[header];
        if (segment->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        uintptr_t end = start + segment->p_memsz;
        // A return address: the call lies just before it, so the end itself belongs.
        if (query->address <= start || query->address > end) continue;
        char executable[4096];
        const char *name = info->dlpi_name;
        if (name == NULL || name[0] == 0) {
            ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
            if (length <= 0) return 1;
            executable[length] = 0;
            name = executable;
        }
        uintptr_t page = 4096;
        int length = snprintf(query->out, query->capacity, "%lx-%lx r-xp %08lx 00:00 0 %s", (unsigned long)(start & ~(page - 1)),
                              (unsigned long)((end + page - 1) & ~(page - 1)), (unsigned long)(segment->p_offset & ~(page - 1)), name);
        query->written = length > 0 && (size_t)length < query->capacity ? length : 0;
        return 1;
    }
    return 0;
}

int strain_alloc_describe_mapping(uintptr_t address, char *out, size_t capacity) {
    strain_alloc_mapping_query query = {address, out, capacity, 0};
    if (capacity > 0) out[0] = 0;
    dl_iterate_phdr(strain_alloc_find_mapping, &query);
    return query.written;
}

#pragma clang attribute pop
