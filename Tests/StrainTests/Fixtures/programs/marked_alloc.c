// A malloc family to preload (LD_PRELOAD) the way a user preloads jemalloc: each
// block comes from glibc's own entry points behind a 32-byte header that marks it,
// and free, realloc and malloc_usable_size abort on a block they did not hand out
// (as another allocator's free does on a foreign block). So a process that mixes
// allocators (this malloc, glibc's free, or the reverse) dies instead of passing.
//
// Each process counts its calls in a file of its own, MARKED_ALLOC_DIR/calls-PID
// ("PROGRAM COUNT\n", a page mapped shared, so a forked copy that ends with _exit
// still leaves its count), from its first call after the environment is readable.
//
// Built with -DPARTIAL it defines malloc, calloc, realloc and free only: an
// allocator whose family is not whole.
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);
extern char *program_invocation_short_name;

#define MARK 0x4d41524b45444d41ull

typedef struct {
    uint64_t mark;
    void *base;
    size_t size;
    uint64_t unused;
} header;

static _Atomic int busy;
static pid_t counted_pid;
static _Atomic uint64_t *counter;

static void count_call(void) {
    pid_t pid = getpid();
    if (pid != counted_pid) {
        int expected = 0;
        while (!atomic_compare_exchange_weak(&busy, &expected, 1)) expected = 0;
        if (pid != counted_pid) {
            const char *folder = getenv("MARKED_ALLOC_DIR");
            if (folder != NULL) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/calls-%d", folder, (int)pid);
                int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0 && ftruncate(fd, 4096) == 0) {
                    char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                    if (page != MAP_FAILED) {
                        // The name first; the count is the 8 bytes at 256, written out as text by the reader.
                        snprintf(page, 256, "%s", program_invocation_short_name);
                        counter = (_Atomic uint64_t *)(page + 256);
                        counted_pid = pid;
                    }
                }
                if (fd >= 0) close(fd);
            }
        }
        atomic_store(&busy, 0);
    }
    if (counted_pid == pid && counter != NULL) atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

static void *mark(void *base, size_t offset, size_t size) {
    if (base == NULL) return NULL;
    char *block = (char *)base + offset;
    header *h = (header *)block - 1;
    h->mark = MARK;
    h->base = base;
    h->size = size;
    return block;
}

static header *marked(void *block, const char *caller) {
    header *h = (header *)block - 1;
    if (h->mark != MARK) {
        char text[128];
        int length = snprintf(text, sizeof(text), "marked_alloc: %s of a block it did not hand out: %p\n", caller, block);
        write(2, text, (size_t)length);
        abort();
    }
    return h;
}

static void *aligned(size_t alignment, size_t size) {
    if (alignment < sizeof(header)) alignment = sizeof(header);
    return mark(__libc_memalign(alignment, size + alignment), alignment, size);
}

// Its own calls stay inside it (static), as an allocator's do: a call through the
// exported names would go to whatever interposes them.
static void *marked_malloc(size_t size) { return mark(__libc_malloc(size + sizeof(header)), sizeof(header), size); }

static void marked_free(void *block) {
    if (block == NULL) return;
    header *h = marked(block, "free");
    h->mark = 0;
    __libc_free(h->base);
}

void *malloc(size_t size) {
    count_call();
    return marked_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_call();
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return NULL;
    void *block = mark(__libc_malloc(bytes + sizeof(header)), sizeof(header), bytes);
    if (block != NULL) memset(block, 0, bytes);
    return block;
}

void free(void *block) {
    count_call();
    marked_free(block);
}

void *realloc(void *block, size_t size) {
    count_call();
    if (block == NULL) return marked_malloc(size);
    size_t old = marked(block, "realloc")->size;
    if (size == 0) {
        marked_free(block);
        return NULL;
    }
    void *grown = marked_malloc(size);
    if (grown != NULL) {
        memcpy(grown, block, old < size ? old : size);
        marked_free(block);
    }
    return grown;
}

#ifndef PARTIAL
size_t malloc_usable_size(void *block) { return block == NULL ? 0 : marked(block, "malloc_usable_size")->size; }

void *memalign(size_t alignment, size_t size) {
    count_call();
    return aligned(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_call();
    return aligned(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    count_call();
    void *block = aligned(alignment, size);
    if (block == NULL) return ENOMEM;
    *out = block;
    return 0;
}

void *valloc(size_t size) {
    count_call();
    return aligned(4096, size);
}

void *pvalloc(size_t size) {
    count_call();
    return aligned(4096, (size + 4095) & ~(size_t)4095);
}
#endif
