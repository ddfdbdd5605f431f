// Allocation counting: the malloc family, defined here so that it interposes
// libc's process-wide (ELF symbol interposition: `strain` links this target
// statically, so its definitions come before libc.so's for every module,
// libswiftCore's swift_slowAlloc included). Each one forwards to glibc's own
// entry point (__libc_malloc and friends), so there is no dlsym and no
// recursion through a lookup that allocates.
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
#include <unistd.h>

// glibc's own allocator, exported for exactly this use (malloc interposers).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

// In a process built with ThreadSanitizer or AddressSanitizer (`-Xswiftc -sanitize=thread`
// links the runtime into strain; a sanitized program under `strain exec` exports it) the
// sanitizer owns the heap: its allocator records every block, and a block it did not
// hand out breaks it (a TSan build of strain died in free with SEGV when these
// interposers went to glibc). Weak references: NULL where no sanitizer is linked, so
// the choice is one more predictable branch on a constant.
extern void *__interceptor_malloc(size_t size) __attribute__((weak));
extern void *__interceptor_calloc(size_t count, size_t size) __attribute__((weak));
extern void *__interceptor_realloc(void *pointer, size_t size) __attribute__((weak));
extern void __interceptor_free(void *pointer) __attribute__((weak));
extern void *__interceptor_memalign(size_t alignment, size_t size) __attribute__((weak));

static inline void *strain_real_malloc(size_t size) {
    return __interceptor_malloc ? __interceptor_malloc(size) : __libc_malloc(size);
}
static inline void *strain_real_calloc(size_t count, size_t size) {
    return __interceptor_calloc ? __interceptor_calloc(count, size) : __libc_calloc(count, size);
}
static inline void *strain_real_realloc(void *pointer, size_t size) {
    return __interceptor_realloc ? __interceptor_realloc(pointer, size) : __libc_realloc(pointer, size);
}
static inline void strain_real_free(void *pointer) {
    if (__interceptor_free) __interceptor_free(pointer); else __libc_free(pointer);
}
static inline void *strain_real_memalign(size_t alignment, size_t size) {
    return __interceptor_memalign ? __interceptor_memalign(alignment, size) : __libc_memalign(alignment, size);
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

// Initial-exec TLS: no __tls_get_addr (which may allocate) in libStrainProbe.so either.
#define STRAIN_ALLOC_TLS __thread __attribute__((tls_model("initial-exec")))
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
    return strain_real_malloc(size);
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_calloc(size_t count, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) bytes = SIZE_MAX;
    strain_alloc_count(STRAIN_ALLOC_SITE(), bytes);
    return strain_real_calloc(count, size);
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_realloc(void *pointer, size_t size) {
    if (size != 0 || pointer == NULL) strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    if (pointer != NULL) strain_alloc_count_free();
    return strain_real_realloc(pointer, size);
}

STRAIN_ALLOC_COUNTED int strain_alloc_counted_posix_memalign(void **out, size_t alignment, size_t size) {
    strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    void *block = strain_real_memalign(alignment, size);
    if (block == NULL) return ENOMEM;
    *out = block;
    return 0;
}

STRAIN_ALLOC_COUNTED void *strain_alloc_counted_memalign(size_t alignment, size_t size) {
    strain_alloc_count(STRAIN_ALLOC_SITE(), size);
    return strain_real_memalign(alignment, size);
}

// The interposers: off, one load and one predictable branch before glibc's.

STRAIN_ALLOC_EXPORT void *malloc(size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_malloc(size);
    return strain_real_malloc(size);
}

STRAIN_ALLOC_EXPORT void *calloc(size_t count, size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_calloc(count, size);
    return strain_real_calloc(count, size);
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
    // glibc's checks: a power of two, a multiple of sizeof(void *).
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_posix_memalign(out, alignment, size);
    void *block = strain_real_memalign(alignment, size);
    if (block == NULL) return ENOMEM;
    *out = block;
    return 0;
}

STRAIN_ALLOC_EXPORT void *aligned_alloc(size_t alignment, size_t size) {
    // glibc 2.36 accepts any power of two here (and rejects the rest with EINVAL).
    if ((alignment & (alignment - 1)) != 0 || alignment == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_memalign(alignment, size);
    return strain_real_memalign(alignment, size);
}

STRAIN_ALLOC_EXPORT void *memalign(size_t alignment, size_t size) {
    if (STRAIN_ALLOC_ON()) __attribute__((musttail)) return strain_alloc_counted_memalign(alignment, size);
    return strain_real_memalign(alignment, size);
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

int strain_alloc_write_totals(const char *path) {
    strain_alloc_totals totals = strain_alloc_read_totals();
    char text[160];
    int length = snprintf(text, sizeof(text), "allocations %llu\nbytes %llu\nfrees %llu\n", (unsigned long long)totals.allocations,
                          (unsigned long long)totals.bytes, (unsigned long long)totals.frees);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    ssize_t written = write(fd, text, (size_t)length);
    int status = written == length ? 0 : (written < 0 ? errno : EIO);
    close(fd);
    return status;
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
