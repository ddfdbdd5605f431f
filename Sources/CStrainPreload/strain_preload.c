// The preloadable probe: installs CStrainProbe in any program at load time and
// keeps it installed on every thread (see include/strain_preload.h).
//
// Rules: the constructor and the interposers run in ordinary code (malloc is
// fine); the handlers they install are CStrainProbe's, which keep its rules.
#include "strain_preload.h"
#include "strain_probe.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/// Frames a fault record keeps (head and tail), as in a trial.
#define STRAIN_PRELOAD_FRAMES (1 << 18)
/// Threads a dump can hold, and frames kept per thread.
#define STRAIN_PRELOAD_DUMP_THREADS 4096
#define STRAIN_PRELOAD_DUMP_FRAMES 128

typedef int (*strain_create_function)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef __sighandler_t (*strain_signal_function)(int, __sighandler_t);

static strain_create_function strain_real_pthread_create;
static strain_sigaction_function strain_real_sigaction;
static strain_signal_function strain_real_signal;
static int strain_preload_active;
static pthread_key_t strain_thread_key;

// ThreadSanitizer's stacks are a shadow stack that its instrumented functions push
// on entry: code it did not instrument (this file) is invisible, and the caller's
// place in an instrumented function is lost with it ("created by main thread at:
// pthread_create, __libc_start_call_main", with main's line missing). In a program
// built with TSan, pthread_create below enters and leaves a frame of its own through
// the runtime's entry points, so a new thread's creation names the caller's line.
static void (*strain_tsan_func_entry)(void *);
static void (*strain_tsan_func_exit)(void);

static void strain_find_real_functions(void) {
    if (strain_real_sigaction != NULL) return;
    strain_tsan_func_entry = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_func_entry");
    strain_tsan_func_exit = (void (*)(void))dlsym(RTLD_DEFAULT, "__tsan_func_exit");
    strain_real_pthread_create = (strain_create_function)dlsym(RTLD_NEXT, "pthread_create");
    strain_real_sigaction = (strain_sigaction_function)dlsym(RTLD_NEXT, "sigaction");
    strain_real_signal = (strain_signal_function)dlsym(RTLD_NEXT, "signal");
}

// The environment is read and changed in `environ` itself, never through
// getenv/setenv/unsetenv: a program may export its own (bash does, over its own
// variable table), and then unsetenv leaves the process's environment as it was,
// every command the program starts loads the probe again, and LD_PRELOAD leaks.
// Entries are removed in place, so a `main(argc, argv, envp)` that reads envp
// (bash builds its variables from it) sees the same array without them.

/// The value of `name` in `environ`, or NULL.
static const char *strain_environment_value(const char *name) {
    size_t length = strlen(name);
    for (char **entry = environ; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
    }
    return NULL;
}

/// Removes every `name=…` from `environ`, shifting the rest down in place.
static void strain_environment_remove(const char *name) {
    if (environ == NULL) return;
    size_t length = strlen(name);
    char **write = environ;
    for (char **read = environ; *read != NULL; read++) {
        if (strncmp(*read, name, length) == 0 && (*read)[length] == '=') continue;
        *write++ = *read;
    }
    *write = NULL;
}

/// Replaces the value of `name` in place with `entry` (a whole `name=value` that lives for the process).
static void strain_environment_replace(const char *name, char *entry) {
    size_t length = strlen(name);
    for (char **slot = environ; slot != NULL && *slot != NULL; slot++) {
        if (strncmp(*slot, name, length) == 0 && (*slot)[length] == '=') {
            *slot = entry;
            return;
        }
    }
}

// Removes `library` from LD_PRELOAD (where `strain exec` put it first) and the
// probe's own variables, so the program's environment is its own again and the
// programs it executes start without the probe.
static void strain_scrub_environment(const char *library) {
    const char *preload = strain_environment_value("LD_PRELOAD");
    if (preload != NULL && library != NULL) {
        size_t length = strlen(library);
        if (strcmp(preload, library) == 0) {
            strain_environment_remove("LD_PRELOAD");
        } else if (strncmp(preload, library, length) == 0 && (preload[length] == ':' || preload[length] == ' ')) {
            const char *rest = preload + length + 1;
            char *entry = malloc(strlen("LD_PRELOAD=") + strlen(rest) + 1);
            if (entry != NULL) {
                strcpy(entry, "LD_PRELOAD=");
                strcat(entry, rest);
                strain_environment_replace("LD_PRELOAD", entry);  // kept for the process's life, as putenv's are
            }
        }
    }
    strain_environment_remove(STRAIN_PRELOAD_DIRECTORY);
    strain_environment_remove(STRAIN_PRELOAD_LIBRARY);
    strain_environment_remove(STRAIN_PRELOAD_THREAD_STACK);
    strain_environment_remove(STRAIN_PRELOAD_MAIN_STACK);
    strain_environment_remove(STRAIN_PRELOAD_PARENT);
    strain_environment_remove(STRAIN_PRELOAD_CHILD_SIGNAL);
    strain_environment_remove(STRAIN_PRELOAD_FOLLOW);
    strain_environment_remove(STRAIN_PRELOAD_ROOT);
    strain_environment_remove(STRAIN_PRELOAD_HANDLER_IMAGES);
}

// Whether strain (pid `ancestor`) is an ancestor of this process, read from
// /proc/PID/stat's parent field up the tree (a descendant of the program is
// probed; a process outside strain's tree never is).
static int strain_descends_from(pid_t ancestor) {
    pid_t current = getppid();
    for (int depth = 0; depth < 256 && current > 1; depth++) {
        if (current == ancestor) return 1;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)current);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 0;
        char text[512];
        ssize_t got = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (got <= 0) return 0;
        text[got] = 0;
        // `pid (comm) S ppid …`: the name may hold spaces and parentheses.
        char *close_paren = strrchr(text, ')');
        if (close_paren == NULL || close_paren[1] == 0 || close_paren[2] == 0) return 0;
        char *cursor = close_paren + 2;
        while (*cursor != 0 && *cursor != ' ') cursor++;
        current = (pid_t)strtol(cursor, NULL, 10);
    }
    return 0;
}

// Whether this process is the program `strain exec` started: its parent is the
// strain named by `parent`. A process whose parent is another one while that
// strain still lives got the probe's variables some other way (a program that
// kept them in its environment and started a command): it is not the program,
// and the probe stays out of its way (returns 0). A strain that died before this
// ran has left the program re-parented: that is still the program (returns 1).
static int strain_is_the_program(const char *parent) {
    if (parent == NULL) return 1;
    pid_t expected = (pid_t)strtol(parent, NULL, 10);
    if (expected <= 0 || getppid() == expected) return 1;
    return kill(expected, 0) == 0 ? 0 : 1;
}

// The program ends with strain exec: SIGTERM when strain dies (a SIGKILL gives it
// no chance to pass a signal on), as if strain had passed on a SIGTERM. A strain
// that died before this ran has already left the program re-parented.
static void strain_bind_to_exec(const char *parent) {
    if (parent == NULL) return;
    pid_t expected = (pid_t)strtol(parent, NULL, 10);
    if (expected <= 0) return;
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) return;
    if (getppid() != expected) kill(getpid(), SIGTERM);
}

// Frees a thread's alternate stack when it ends (the key's value is only a flag).
static void strain_thread_ended(void *value) {
    (void)value;
    strain_thread_release();
}

/// Tells CStrainProbe's malloc family it runs in a program under `strain exec` (a weak
/// reference there): a preloaded allocator whose family is not whole is kept, each
/// function forwarded to its own next definition, rather than replaced by glibc's.
const int strain_preload_library = 1;

// `allocations-PID.txt` in the record directory, written at the program's exit when
// it was counted (empty otherwise); and the pid it belongs to (not a forked child's).
static char strain_allocations_path[64];
static pid_t strain_allocations_pid;

/// Whether the program's calls to `malloc` reach the probe's: the first definition in
/// lookup order is in the probe's own library. Not when something ahead of it defines
/// malloc: a sanitizer runtime (preloaded before the probe, or linked into the
/// executable by clang and swiftc), or a program's own allocator linked in. Its
/// allocations then never pass through the probe, and a count of 0 would be a lie.
static int strain_preload_counts_malloc(void) {
    void *first = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info found, own;
    if (first == NULL || dladdr(first, &found) == 0 || dladdr((void *)strain_preload_counts_malloc, &own) == 0) return 0;
    return found.dli_fbase == own.dli_fbase;
}

/// The program's allocations, from the probe's constructor to its exit; no file when
/// they were not counted (strain then records none, not a zero).
__attribute__((destructor)) static void strain_preload_end(void) {
    if (strain_allocations_path[0] == 0 || getpid() != strain_allocations_pid) return;
    strain_alloc_end();
    if (!strain_preload_counts_malloc()) return;
    strain_alloc_write_totals(strain_probe_record_open(strain_allocations_path, O_WRONLY | O_CREAT | O_TRUNC));
}

// MARK: - Following the program's execs and children

// What a probe that follows puts into the environment of each program its
// process executes or spawns: the probe's variables (`NAME=value`, kept for the
// process's life) and the library for LD_PRELOAD. Set once, before main.
#define STRAIN_FOLLOW_ENTRIES 8
static char *strain_follow_entries[STRAIN_FOLLOW_ENTRIES];
static size_t strain_follow_count;
static char *strain_follow_library;
static int strain_following;
/// The program's pid (the root of the tree this probe belongs to), and whether it
/// keeps the images file (STRAIN_PRELOAD_IMAGES_FILE in the record directory).
static pid_t strain_root_pid;
static int strain_noting_images;
// Whether this image notes its installs: it maps a runtime with handlers of its own.
static int strain_noting_handlers;
static void strain_handler_notes_after_fork(void);
static void strain_note_ignored_at_start(void);

// Whether the file name at the end of `path` begins with one of `prefixes` (`:`-separated).
static int strain_image_named(const char *path, const char *prefixes) {
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    for (const char *prefix = prefixes; *prefix != 0;) {
        size_t length = strcspn(prefix, ":");
        if (length > 0 && strncmp(name, prefix, length) == 0) return 1;
        prefix += length + (prefix[length] == ':');
    }
    return 0;
}

static int strain_object_named(struct dl_phdr_info *info, size_t size, void *prefixes) {
    (void)size;
    return info->dlpi_name != NULL && info->dlpi_name[0] != 0 && strain_image_named(info->dlpi_name, prefixes);
}

// Whether this image (its executable, or a library loaded with it) is one of the
// runtimes strain names (STRAIN_PRELOAD_HANDLER_IMAGES): only their installs are
// counted, since only a runtime's own handler makes SigCgt ambiguous. Every process
// noting its own left a file per bash subshell (a loop of 200 `$(ls | wc -l)` left 205).
static int strain_is_counted_runtime(const char *prefixes) {
    if (prefixes == NULL || prefixes[0] == 0) return 0;
    char executable[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
    if (length > 0) {
        executable[length] = 0;
        if (strain_image_named(executable, prefixes)) return 1;
    }
    return dl_iterate_phdr(strain_object_named, (void *)prefixes) != 0;
}

static void strain_follow_keep(const char *name, const char *value) {
    if (value == NULL || strain_follow_count >= STRAIN_FOLLOW_ENTRIES) return;
    size_t length = strlen(name) + 1 + strlen(value) + 1;
    char *entry = malloc(length);
    if (entry == NULL) return;
    snprintf(entry, length, "%s=%s", name, value);
    strain_follow_entries[strain_follow_count++] = entry;
}

// Writes `length` bytes to the probe folder's record `name`, opened with `flags`, in one
// write(2); a record that cannot be opened is skipped, as the probe never fails the
// program for its own files. Async-signal-safe and vfork-safe (open, write, close).
static void strain_preload_record_write(const char *name, int flags, const char *bytes, size_t length) {
    int fd = strain_probe_record_open(name, flags);
    if (fd < 0) return;
    ssize_t written = write(fd, bytes, length);
    (void)written;
    close(fd);
}

// Appends one line to the program's images file: one write(2) of a line under
// PIPE_BUF to a file opened O_APPEND, so lines never interleave. Async-signal-safe
// and vfork-safe (no malloc): it runs in a vfork child just before its exec.
static void strain_note_image(const char *event, const char *path) {
    if (!strain_noting_images || getpid() != strain_root_pid) return;
    char line[1024];
    size_t used = 0;
    for (const char *c = event; *c != 0 && used < 32; c++) line[used++] = *c;
    if (path != NULL) {
        line[used++] = ' ';
        for (const char *c = path; *c != 0 && used < sizeof(line) - 2; c++) line[used++] = *c == '\n' ? '?' : *c;
    }
    line[used++] = '\n';
    strain_preload_record_write(STRAIN_PRELOAD_IMAGES_FILE, O_WRONLY | O_APPEND | O_CREAT, line, used);
}

/// Whether `list` (an LD_PRELOAD value: names split by `:` or spaces) names `library`.
static int strain_preload_names(const char *list, const char *library) {
    size_t length = strlen(library);
    for (const char *cursor = list; cursor != NULL && *cursor != 0;) {
        while (*cursor == ':' || *cursor == ' ') cursor++;
        const char *end = cursor;
        while (*end != 0 && *end != ':' && *end != ' ') end++;
        if ((size_t)(end - cursor) == length && strncmp(cursor, library, length) == 0) return 1;
        cursor = end;
    }
    return 0;
}

static int strain_is_probe_entry(const char *entry) {
    return strncmp(entry, "LD_PRELOAD=", 11) == 0 || strncmp(entry, "STRAIN_PROBE_", 13) == 0;
}

/// Bytes the followed environment of `envp` needs (pointers, then the LD_PRELOAD entry).
static size_t strain_follow_bytes(char *const envp[]) {
    size_t count = 0, preload = 0;
    for (char *const *entry = envp; entry != NULL && *entry != NULL; entry++) {
        count++;
        if (strncmp(*entry, "LD_PRELOAD=", 11) == 0) preload = strlen(*entry);
    }
    return (count + STRAIN_FOLLOW_ENTRIES + 2) * sizeof(char *) + strlen(strain_follow_library) + preload + 16;
}

// Fills `buffer` (strain_follow_bytes(envp) bytes) with `envp` less its LD_PRELOAD
// and probe variables, then the probe's LD_PRELOAD (the library first, the program's
// own list after it) and variables. No malloc: it runs in vfork children.
static char **strain_follow_fill(char *const envp[], void *buffer) {
    char **out = buffer;
    size_t used = 0;
    const char *preload = NULL;
    for (char *const *entry = envp; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, "LD_PRELOAD=", 11) == 0) preload = *entry + 11;
        if (!strain_is_probe_entry(*entry)) out[used++] = *entry;
    }
    char **ours = out + used;
    size_t count = 0;
    for (char *const *entry = envp; entry != NULL && *entry != NULL; entry++) count++;
    char *text = (char *)(out + count + STRAIN_FOLLOW_ENTRIES + 2);
    strcpy(text, "LD_PRELOAD=");
    if (preload == NULL || preload[0] == 0) {
        strcat(text, strain_follow_library);
    } else if (strain_preload_names(preload, strain_follow_library)) {
        strcat(text, preload);
    } else {
        strcat(text, strain_follow_library);
        strcat(text, ":");
        strcat(text, preload);
    }
    *ours++ = text;
    for (size_t i = 0; i < strain_follow_count; i++) *ours++ = strain_follow_entries[i];
    *ours = NULL;
    return out;
}

// Whether `envp` gives the program a probe folder other than this probe's: a `strain
// exec` inside the tree (a test of Strain, a tool that runs strain exec) starting its
// own program. That program is the inner strain's, and its environment is left as that
// strain wrote it: rewritten, its probe wrote into this folder, and the inner strain
// said its program had no probe. No malloc: it runs in vfork children.
static int strain_is_another_strains(char *const envp[]) {
    static const char prefix[] = STRAIN_PRELOAD_DIRECTORY "=";
    const char *ours = NULL;
    for (size_t i = 0; i < strain_follow_count; i++) {
        if (strncmp(strain_follow_entries[i], prefix, sizeof(prefix) - 1) == 0) ours = strain_follow_entries[i];
    }
    if (ours == NULL) return 0;
    for (char *const *entry = envp; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, prefix, sizeof(prefix) - 1) == 0 && strcmp(*entry, ours) != 0) return 1;
    }
    return 0;
}

// Calls `call` with the followed environment of `envp`, built on the stack when it
// is small (a vfork child's mmap would stay mapped in its parent), else in a mapping.
#define STRAIN_FOLLOW_STACK_BYTES (8 * 1024)
typedef int (*strain_environment_call)(void *context, char *const envp[]);
static int strain_with_followed_environment(char *const envp[], strain_environment_call call, void *context) {
    if (strain_is_another_strains(envp)) return call(context, envp);
    size_t bytes = strain_follow_bytes(envp);
    if (bytes <= STRAIN_FOLLOW_STACK_BYTES) {
        uintptr_t buffer[(bytes + sizeof(uintptr_t) - 1) / sizeof(uintptr_t)];
        return call(context, strain_follow_fill(envp, buffer));
    }
    void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return call(context, envp);
    int status = call(context, strain_follow_fill(envp, mapped));
    int saved = errno;
    munmap(mapped, bytes);
    errno = saved;
    return status;
}

// Who this process is in strain exec's tree.
typedef enum {
    strain_role_outside,     // not strain exec's: inert
    strain_role_program,     // the program strain started, or what it executed
    strain_role_descendant,  // a process the program started (or theirs), probed but never bound to strain
} strain_role;

static strain_role strain_find_role(void) {
    const char *root = strain_environment_value(STRAIN_PRELOAD_ROOT);
    const char *parent = strain_environment_value(STRAIN_PRELOAD_PARENT);
    pid_t root_pid = root != NULL ? (pid_t)strtol(root, NULL, 10) : 0;
    if (root_pid <= 0 || root_pid == getpid()) {
        return strain_is_the_program(parent) ? strain_role_program : strain_role_outside;
    }
    // Another pid than the program's: a descendant while strain lives and is its ancestor.
    pid_t expected = parent != NULL ? (pid_t)strtol(parent, NULL, 10) : 0;
    return expected > 0 && strain_descends_from(expected) ? strain_role_descendant : strain_role_outside;
}

// MARK: - Standard error's tail

typedef ssize_t (*strain_write_function)(int, const void *, size_t);
typedef ssize_t (*strain_writev_function)(int, const struct iovec *, int);
static strain_write_function strain_real_write;
static strain_writev_function strain_real_writev;
/// Set once the probe is active in this process: writes to fd 2 are kept from then on.
static volatile int strain_keeping_stderr;

// Found before main (dlsym is neither async-signal-safe nor vfork-safe, and write is
// both); a write before this ran (another library's constructor) goes straight to
// the system call.
__attribute__((constructor)) static void strain_find_write_functions(void) {
    if (strain_real_write != NULL) return;
    strain_real_writev = (strain_writev_function)dlsym(RTLD_NEXT, "writev");
    strain_real_write = (strain_write_function)dlsym(RTLD_NEXT, "write");
}

// MARK: - Copies of standard error

// A shell prints `echo "error: …" >&2` by making fd 1 a copy of fd 2 for the command
// (dup2(2, 1)), writing to fd 1, then putting fd 1 back: what goes to such a copy goes
// to standard error, and is kept as fd 2's is. dup, dup2 and dup3 mark the copies here
// (one bit a descriptor below 1024); a mark can go stale (glibc closes descriptors by an
// internal call no interposer sees, and the number is reused), so a marked descriptor
// counts only while it is still the file fd 2 is (fstat: device and inode), checked at
// each write to it. fcntl's F_DUPFD is not followed (shells save a descriptor with it,
// not make a copy of fd 2).
#define STRAIN_STDERR_COPY_LIMIT 1024
static _Atomic unsigned long strain_stderr_copies[STRAIN_STDERR_COPY_LIMIT / 64];

typedef int (*strain_dup_function)(int);
typedef int (*strain_dup2_function)(int, int);
typedef int (*strain_dup3_function)(int, int, int);
static strain_dup_function strain_real_dup;
static strain_dup2_function strain_real_dup2;
static strain_dup3_function strain_real_dup3;

static int strain_marked_stderr_copy(int fd) {
    if (fd < 0 || fd >= STRAIN_STDERR_COPY_LIMIT) return 0;
    return (int)((atomic_load_explicit(&strain_stderr_copies[fd / 64], memory_order_relaxed) >> (fd % 64)) & 1UL);
}

/// Whether a write to `fd` goes to standard error: fd 2, or a copy of it that still is.
static int strain_is_stderr(int fd) {
    if (fd == 2) return 1;
    if (!strain_marked_stderr_copy(fd)) return 0;
    int saved = errno;
    struct stat copy, original;
    int same = fstat(fd, &copy) == 0 && fstat(2, &original) == 0 && copy.st_dev == original.st_dev && copy.st_ino == original.st_ino;
    errno = saved;
    return same;
}

/// After `to` became a copy of `from`: marked when `from` is standard error, else unmarked.
static void strain_note_copy(int from, int to) {
    if (to < 0 || to >= STRAIN_STDERR_COPY_LIMIT || to == 2) return;
    unsigned long bit = 1UL << (to % 64);
    if (from == 2 || strain_marked_stderr_copy(from)) {
        atomic_fetch_or_explicit(&strain_stderr_copies[to / 64], bit, memory_order_relaxed);
    } else {
        atomic_fetch_and_explicit(&strain_stderr_copies[to / 64], ~bit, memory_order_relaxed);
    }
}

__attribute__((constructor)) static void strain_find_dup_functions(void) {
    if (strain_real_dup2 != NULL) return;
    strain_real_dup = (strain_dup_function)dlsym(RTLD_NEXT, "dup");
    strain_real_dup3 = (strain_dup3_function)dlsym(RTLD_NEXT, "dup3");
    strain_real_dup2 = (strain_dup2_function)dlsym(RTLD_NEXT, "dup2");
}

int dup(int fd) {
    int result = strain_real_dup != NULL ? strain_real_dup(fd) : (int)syscall(SYS_dup, fd);
    if (result >= 0) strain_note_copy(fd, result);
    return result;
}

int dup2(int from, int to) {
    int result;
    if (strain_real_dup2 != NULL) {
        result = strain_real_dup2(from, to);
    } else {
#ifdef SYS_dup2
        result = (int)syscall(SYS_dup2, from, to);
#else
        result = from == to ? (fcntl(from, F_GETFD) == -1 ? -1 : to) : (int)syscall(SYS_dup3, from, to, 0);
#endif
    }
    if (result >= 0 && from != to) strain_note_copy(from, result);
    return result;
}

int dup3(int from, int to, int flags) {
    int result = strain_real_dup3 != NULL ? strain_real_dup3(from, to, flags) : (int)syscall(SYS_dup3, from, to, flags);
    if (result >= 0) strain_note_copy(from, result);
    return result;
}

// The program's own calls to write and writev bind here: each is passed on unchanged
// (the terminal sees exactly what it saw), and what reached fd 2 is kept too. Rust's
// and the JVM's messages come this way (they call write); glibc's stdio does not (its
// streams write by an internal call no interposer sees): see the stdio entry points below.
ssize_t write(int fd, const void *bytes, size_t length) {
    ssize_t written = strain_real_write != NULL ? strain_real_write(fd, bytes, length) : syscall(SYS_write, fd, bytes, length);
    if (written > 0 && strain_keeping_stderr && strain_is_stderr(fd)) {
        int saved = errno;
        strain_stderr_keep(bytes, (size_t)written);
        errno = saved;
    }
    return written;
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    ssize_t written = strain_real_writev != NULL ? strain_real_writev(fd, vector, count) : syscall(SYS_writev, fd, vector, count);
    if (written > 0 && strain_keeping_stderr && strain_is_stderr(fd)) {
        int saved = errno;
        size_t left = (size_t)written;
        for (int i = 0; i < count && left > 0; i++) {
            size_t part = vector[i].iov_len < left ? vector[i].iov_len : left;
            strain_stderr_keep(vector[i].iov_base, part);
            left -= part;
        }
        errno = saved;
    }
    return written;
}

// MARK: - Standard error's tail, through stdio

// glibc's streams write by its internal write, which the interposer above never sees:
// a C program's fprintf(stderr, …) before abort(), libstdc++'s "terminate called after
// throwing an instance of …" (fputs, fwrite and fputc, from libstdc++.so), Lua's and
// Node's messages. Their entry points are ordinary dynamic symbols: each below passes
// the call on to the next definition (libc's, or a sanitizer's interceptor) with the
// same arguments, so the program prints exactly what it prints alone, and then copies
// what went to a stream on fd 2 into the tail. A formatted write is formatted a second
// time for the copy, with the errno the program's call saw (`%m`), into a buffer on the
// stack, or mapped when the text is longer, never by malloc: a program's signal
// handler may print. glibc's libio calls none of these by name (its internal aliases),
// so nothing is kept twice. Each name is in parentheses: glibc's headers make some of
// them macros when optimizing (fwrite_unlocked, putc).
//
// Not reached: what glibc prints by its own internal stdio (error(), err() and warn(),
// psignal; assert's and malloc's messages, which the fault record reads from
// __abort_msg instead), wide-character output, putc_unlocked's inline fast path, and
// any runtime that makes its system calls itself (Go's runtime never calls libc's
// write: a Go panic's words are not kept).
//
// Each variadic entry point (printf, fprintf, dprintf and their _FORTIFY_SOURCE forms)
// calls its `v` form here, which passes the call on and keeps the copy.

typedef int (*strain_fputs_function)(const char *, FILE *);
typedef size_t (*strain_fwrite_function)(const void *, size_t, size_t, FILE *);
typedef int (*strain_fputc_function)(int, FILE *);
typedef int (*strain_vfprintf_function)(FILE *, const char *, va_list);
typedef int (*strain_vfprintf_chk_function)(FILE *, int, const char *, va_list);
typedef int (*strain_vdprintf_function)(int, const char *, va_list);
typedef int (*strain_vdprintf_chk_function)(int, int, const char *, va_list);
typedef void (*strain_perror_function)(const char *);
typedef int (*strain_vprintf_function)(const char *, va_list);
typedef int (*strain_vprintf_chk_function)(int, const char *, va_list);
typedef int (*strain_putchar_function)(int);
typedef int (*strain_puts_function)(const char *);

/// The next definitions of the stdio entry points below (libc's).
static struct {
    strain_fputs_function fputs, fputs_unlocked;
    strain_fwrite_function fwrite, fwrite_unlocked;
    strain_fputc_function fputc, fputc_unlocked, putc, putc_unlocked;
    strain_vfprintf_function vfprintf;
    strain_vfprintf_chk_function vfprintf_chk;
    strain_vdprintf_function vdprintf;
    strain_vdprintf_chk_function vdprintf_chk;
    strain_perror_function perror;
    // stdout's: a shell's `echo … >&2` prints through them once fd 1 is a copy of fd 2.
    strain_vprintf_function vprintf;
    strain_vprintf_chk_function vprintf_chk;
    strain_putchar_function putchar;
    strain_puts_function puts;
} strain_real_stdio;
static _Atomic int strain_stdio_found;

// Found by the constructor, before main (dlsym is not async-signal-safe). A call that
// comes before it ran (another library's constructor printing) finds them itself, in
// that ordinary code; every store is of the same pointer, so two such callers agree.
__attribute__((constructor)) static void strain_find_stdio_functions(void) {
    if (atomic_load_explicit(&strain_stdio_found, memory_order_acquire)) return;
    strain_real_stdio.fputs = (strain_fputs_function)dlsym(RTLD_NEXT, "fputs");
    strain_real_stdio.fputs_unlocked = (strain_fputs_function)dlsym(RTLD_NEXT, "fputs_unlocked");
    strain_real_stdio.fwrite = (strain_fwrite_function)dlsym(RTLD_NEXT, "fwrite");
    strain_real_stdio.fwrite_unlocked = (strain_fwrite_function)dlsym(RTLD_NEXT, "fwrite_unlocked");
    strain_real_stdio.fputc = (strain_fputc_function)dlsym(RTLD_NEXT, "fputc");
    strain_real_stdio.fputc_unlocked = (strain_fputc_function)dlsym(RTLD_NEXT, "fputc_unlocked");
    strain_real_stdio.putc = (strain_fputc_function)dlsym(RTLD_NEXT, "putc");
    strain_real_stdio.putc_unlocked = (strain_fputc_function)dlsym(RTLD_NEXT, "putc_unlocked");
    strain_real_stdio.vfprintf = (strain_vfprintf_function)dlsym(RTLD_NEXT, "vfprintf");
    strain_real_stdio.vfprintf_chk = (strain_vfprintf_chk_function)dlsym(RTLD_NEXT, "__vfprintf_chk");
    strain_real_stdio.vdprintf = (strain_vdprintf_function)dlsym(RTLD_NEXT, "vdprintf");
    strain_real_stdio.vdprintf_chk = (strain_vdprintf_chk_function)dlsym(RTLD_NEXT, "__vdprintf_chk");
    strain_real_stdio.perror = (strain_perror_function)dlsym(RTLD_NEXT, "perror");
    strain_real_stdio.vprintf = (strain_vprintf_function)dlsym(RTLD_NEXT, "vprintf");
    strain_real_stdio.vprintf_chk = (strain_vprintf_chk_function)dlsym(RTLD_NEXT, "__vprintf_chk");
    strain_real_stdio.putchar = (strain_putchar_function)dlsym(RTLD_NEXT, "putchar");
    strain_real_stdio.puts = (strain_puts_function)dlsym(RTLD_NEXT, "puts");
    atomic_store_explicit(&strain_stdio_found, 1, memory_order_release);
}

/// The next definition of the stdio entry point `name`.
#define STRAIN_REAL_STDIO(name) \
    (atomic_load_explicit(&strain_stdio_found, memory_order_acquire) ? (void)0 : strain_find_stdio_functions(), strain_real_stdio.name)

/// Whether what goes to `stream` is kept: the probe keeps the tail, and the stream writes to fd 2.
static int strain_stdio_keeps(FILE *stream) {
    if (!strain_keeping_stderr || stream == NULL) return 0;
    int saved = errno;
    int fd = fileno_unlocked(stream);  // -1 and EBADF for a stream without a descriptor (fopencookie, fmemopen)
    errno = saved;
    return strain_is_stderr(fd);
}

static void strain_stdio_keep(const void *bytes, size_t length) {
    int saved = errno;
    strain_stderr_keep(bytes, length);
    errno = saved;
}

/// Formatted text longer than this is not copied (the tail keeps STRAIN_STDERR_TAIL_BYTES).
#define STRAIN_STDIO_FORMAT_LIMIT (16u << 20)

/// Copies the `length` bytes a formatted write printed: formats them again, with the
/// errno the program's call began with (`%m` names it), then gives errno back.
static void strain_stdio_keep_formatted(int length, int errno_before, const char *format, va_list arguments) {
    if (length <= 0 || (unsigned)length >= STRAIN_STDIO_FORMAT_LIMIT) return;
    int errno_after = errno;
    char on_stack[1024];
    size_t size = (size_t)length + 1;
    char *buffer = on_stack;
    if (size > sizeof(on_stack)) {
        buffer = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buffer == MAP_FAILED) { errno = errno_after; return; }
    }
    errno = errno_before;
    int formatted = vsnprintf(buffer, size, format, arguments);
    if (formatted > 0) strain_stderr_keep(buffer, (size_t)formatted < size - 1 ? (size_t)formatted : size - 1);
    if (buffer != on_stack) munmap(buffer, size);
    errno = errno_after;
}

int (fputs)(const char *text, FILE *stream) {
    int result = STRAIN_REAL_STDIO(fputs)(text, stream);
    if (result >= 0 && strain_stdio_keeps(stream)) strain_stdio_keep(text, strlen(text));
    return result;
}

int (fputs_unlocked)(const char *text, FILE *stream) {
    int result = STRAIN_REAL_STDIO(fputs_unlocked)(text, stream);
    if (result >= 0 && strain_stdio_keeps(stream)) strain_stdio_keep(text, strlen(text));
    return result;
}

size_t (fwrite)(const void *bytes, size_t size, size_t count, FILE *stream) {
    size_t written = STRAIN_REAL_STDIO(fwrite)(bytes, size, count, stream);
    if (written > 0 && size > 0 && strain_stdio_keeps(stream)) strain_stdio_keep(bytes, written * size);
    return written;
}

size_t (fwrite_unlocked)(const void *bytes, size_t size, size_t count, FILE *stream) {
    size_t written = STRAIN_REAL_STDIO(fwrite_unlocked)(bytes, size, count, stream);
    if (written > 0 && size > 0 && strain_stdio_keeps(stream)) strain_stdio_keep(bytes, written * size);
    return written;
}

/// After a one-byte write that returned `result`.
static int strain_stdio_kept_byte(int result, FILE *stream) {
    if (result != EOF && strain_stdio_keeps(stream)) {
        unsigned char byte = (unsigned char)result;
        strain_stdio_keep(&byte, 1);
    }
    return result;
}

int (fputc)(int byte, FILE *stream) { return strain_stdio_kept_byte(STRAIN_REAL_STDIO(fputc)(byte, stream), stream); }
int (fputc_unlocked)(int byte, FILE *stream) { return strain_stdio_kept_byte(STRAIN_REAL_STDIO(fputc_unlocked)(byte, stream), stream); }
int (putc)(int byte, FILE *stream) { return strain_stdio_kept_byte(STRAIN_REAL_STDIO(putc)(byte, stream), stream); }
int (putc_unlocked)(int byte, FILE *stream) { return strain_stdio_kept_byte(STRAIN_REAL_STDIO(putc_unlocked)(byte, stream), stream); }

// stdout's entry points: kept only while stdout's descriptor is a copy of fd 2 (bash's
// `echo … >&2` calls __printf_chk and putchar on stdout after dup2(2, 1)).
int (putchar)(int byte) { return strain_stdio_kept_byte(STRAIN_REAL_STDIO(putchar)(byte), stdout); }

int (puts)(const char *text) {
    int result = STRAIN_REAL_STDIO(puts)(text);
    if (result >= 0 && strain_stdio_keeps(stdout)) {
        strain_stdio_keep(text, strlen(text));
        strain_stdio_keep("\n", 1);
    }
    return result;
}

int (vprintf)(const char *format, va_list arguments) {
    int errno_before = errno;
    va_list copy;
    va_copy(copy, arguments);
    int result = STRAIN_REAL_STDIO(vprintf)(format, arguments);
    if (strain_stdio_keeps(stdout)) strain_stdio_keep_formatted(result, errno_before, format, copy);
    va_end(copy);
    return result;
}

int (printf)(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = (vprintf)(format, arguments);
    va_end(arguments);
    return result;
}

int (__vprintf_chk)(int flag, const char *format, va_list arguments) {
    int errno_before = errno;
    va_list copy;
    va_copy(copy, arguments);
    int result = STRAIN_REAL_STDIO(vprintf_chk)(flag, format, arguments);
    if (strain_stdio_keeps(stdout)) strain_stdio_keep_formatted(result, errno_before, format, copy);
    va_end(copy);
    return result;
}

int (__printf_chk)(int flag, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = (__vprintf_chk)(flag, format, arguments);
    va_end(arguments);
    return result;
}

int (vfprintf)(FILE *stream, const char *format, va_list arguments) {
    int errno_before = errno;
    va_list copy;
    va_copy(copy, arguments);
    int result = STRAIN_REAL_STDIO(vfprintf)(stream, format, arguments);
    if (strain_stdio_keeps(stream)) strain_stdio_keep_formatted(result, errno_before, format, copy);
    va_end(copy);
    return result;
}

int (fprintf)(FILE *stream, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = (vfprintf)(stream, format, arguments);
    va_end(arguments);
    return result;
}

// _FORTIFY_SOURCE's forms of fprintf and vfprintf (`flag` > 0 checks %n's target; the
// program's call has done that before the copy is made).
int (__vfprintf_chk)(FILE *stream, int flag, const char *format, va_list arguments) {
    int errno_before = errno;
    va_list copy;
    va_copy(copy, arguments);
    int result = STRAIN_REAL_STDIO(vfprintf_chk)(stream, flag, format, arguments);
    if (strain_stdio_keeps(stream)) strain_stdio_keep_formatted(result, errno_before, format, copy);
    va_end(copy);
    return result;
}

int (__fprintf_chk)(FILE *stream, int flag, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = (__vfprintf_chk)(stream, flag, format, arguments);
    va_end(arguments);
    return result;
}

// dprintf writes to a descriptor, but by glibc's internal write as well.
int (vdprintf)(int fd, const char *format, va_list arguments) {
    int errno_before = errno;
    va_list copy;
    va_copy(copy, arguments);
    int result = STRAIN_REAL_STDIO(vdprintf)(fd, format, arguments);
    if (strain_keeping_stderr && strain_is_stderr(fd)) strain_stdio_keep_formatted(result, errno_before, format, copy);
    va_end(copy);
    return result;
}

int (dprintf)(int fd, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = (vdprintf)(fd, format, arguments);
    va_end(arguments);
    return result;
}

int (__vdprintf_chk)(int fd, int flag, const char *format, va_list arguments) {
    int errno_before = errno;
    va_list copy;
    va_copy(copy, arguments);
    int result = STRAIN_REAL_STDIO(vdprintf_chk)(fd, flag, format, arguments);
    if (strain_keeping_stderr && strain_is_stderr(fd)) strain_stdio_keep_formatted(result, errno_before, format, copy);
    va_end(copy);
    return result;
}

int (__dprintf_chk)(int fd, int flag, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = (__vdprintf_chk)(fd, flag, format, arguments);
    va_end(arguments);
    return result;
}

// perror prints `message: <strerror(errno)>\n` on stderr (through a duplicate of its
// descriptor); the copy is the same text, from the errno it was called with.
void (perror)(const char *message) {
    int number = errno;
    STRAIN_REAL_STDIO(perror)(message);
    if (!strain_stdio_keeps(stderr)) return;
    int errno_after = errno;
    if (message != NULL && message[0] != 0) {
        strain_stderr_keep(message, strlen(message));
        strain_stderr_keep(": ", 2);
    }
    char buffer[256];
    const char *text = strerror_r(number, buffer, sizeof(buffer));
    if (text != NULL) strain_stderr_keep(text, strlen(text));
    strain_stderr_keep("\n", 1);
    errno = errno_after;
}

/// Set where the program's exit writes its tail (it and the processes it forks inherit it).
static volatile int strain_tail_at_exit;

// `_exit` and `_Exit` end the process without exit's handlers: dash's `exit 2` after
// `echo "error: …" >&2` left no tail. A nonzero status writes it here, as exit does
// (async-signal-safe: `_exit` may be called from a handler or a forked child), then the
// process ends by the system call `_exit` makes.
_Noreturn void _exit(int status) {
    if (status != 0 && strain_tail_at_exit) strain_stderr_write_tail();
    for (;;) syscall(SYS_exit_group, status);
}

_Noreturn void _Exit(int status) { _exit(status); }

/// At the program's exit: its tail, when it ended by a nonzero status (a JVM's uncaught exception).
static void strain_stderr_at_exit(int status, void *unused) {
    (void)unused;
    if (status != 0) strain_stderr_write_tail();
}

static void strain_preload_install(int is_program);

__attribute__((constructor)) static void strain_preload_start(void) {
    strain_find_real_functions();
    const char *directory = strain_environment_value(STRAIN_PRELOAD_DIRECTORY);
    if (directory == NULL || directory[0] == 0 || strain_real_sigaction == NULL || strain_real_pthread_create == NULL) {
        return;  // not started by `strain exec`: stay out of the way
    }
    strain_role role = strain_find_role();
    if (role == strain_role_outside) {
        // Inherited, not given: clean the environment for this process's own children and do nothing else.
        strain_scrub_environment(strain_environment_value(STRAIN_PRELOAD_LIBRARY));
        return;
    }
    const char *root = strain_environment_value(STRAIN_PRELOAD_ROOT);
    strain_root_pid = role == strain_role_program ? getpid() : (pid_t)strtol(root, NULL, 10);
    const char *library = strain_environment_value(STRAIN_PRELOAD_LIBRARY);
    const char *follow = strain_environment_value(STRAIN_PRELOAD_FOLLOW);
    if (follow != NULL && strcmp(follow, "1") == 0 && library != NULL && library[0] != 0) {
        char root_text[24];
        snprintf(root_text, sizeof(root_text), "%d", (int)strain_root_pid);
        strain_follow_library = strdup(library);
        strain_follow_keep(STRAIN_PRELOAD_DIRECTORY, directory);
        strain_follow_keep(STRAIN_PRELOAD_LIBRARY, library);
        strain_follow_keep(STRAIN_PRELOAD_THREAD_STACK, strain_environment_value(STRAIN_PRELOAD_THREAD_STACK));
        strain_follow_keep(STRAIN_PRELOAD_MAIN_STACK, strain_environment_value(STRAIN_PRELOAD_MAIN_STACK));
        strain_follow_keep(STRAIN_PRELOAD_PARENT, strain_environment_value(STRAIN_PRELOAD_PARENT));
        strain_follow_keep(STRAIN_PRELOAD_FOLLOW, "1");
        strain_follow_keep(STRAIN_PRELOAD_ROOT, root_text);
        strain_follow_keep(STRAIN_PRELOAD_HANDLER_IMAGES, strain_environment_value(STRAIN_PRELOAD_HANDLER_IMAGES));
        strain_following = strain_follow_library != NULL;
    }
    // Records go only into the folder strain made: taken here, before the first one
    // (a link or a file in its place, or a name too long: this process records nothing).
    int recording = strain_probe_record_to_directory(directory) == 0;
    strain_noting_handlers = recording && strain_is_counted_runtime(strain_environment_value(STRAIN_PRELOAD_HANDLER_IMAGES));
    if (strain_noting_handlers) {
        strain_note_ignored_at_start();
        pthread_atfork(NULL, NULL, strain_handler_notes_after_fork);
    }
    if (role == strain_role_program && recording) {
        strain_noting_images = 1;
        strain_note_image("start", NULL);
    }
    // A descendant is probed, but only the program is bound to strain's life, gets
    // SIGCHLD's disposition back, is counted and answers SIGQUIT with a dump.
    int is_program = role == strain_role_program;
    const char *thread_stack = strain_environment_value(STRAIN_PRELOAD_THREAD_STACK);
    const char *main_stack = strain_environment_value(STRAIN_PRELOAD_MAIN_STACK);
    size_t thread_bytes = thread_stack != NULL ? strtoull(thread_stack, NULL, 10) : 0;
    size_t main_bytes = main_stack != NULL ? strtoull(main_stack, NULL, 10) : 0;
    if (is_program) strain_bind_to_exec(strain_environment_value(STRAIN_PRELOAD_PARENT));
    const char *child_signal = strain_environment_value(STRAIN_PRELOAD_CHILD_SIGNAL);
    if (is_program && child_signal != NULL && strcmp(child_signal, "ignore") == 0) {
        struct sigaction ignore;
        memset(&ignore, 0, sizeof(ignore));
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        strain_real_sigaction(SIGCHLD, &ignore, NULL);
    }
    strain_scrub_environment(strain_environment_value(STRAIN_PRELOAD_LIBRARY));

    // A profile (--profile ios): before any thread of the program starts.
    if (thread_bytes != 0 || main_bytes != 0) strain_set_stack_profile(thread_bytes, main_bytes);
    strain_probe_use_sigaction(strain_real_sigaction);
    if (!recording) return;
    // The whole program is the work: its allocations are counted from the end of this
    // start (below, once the probe is installed) to its exit.
    if (is_program && strain_alloc_is_interposing()) {
        int length = snprintf(strain_allocations_path, sizeof(strain_allocations_path), "allocations-%d.txt", (int)getpid());
        if (length > 0 && (size_t)length < sizeof(strain_allocations_path)) {
            strain_allocations_pid = getpid();
        } else {
            strain_allocations_path[0] = 0;
        }
    }
    // Its standard error's tail: kept from here on (a forked child keeps its own),
    // written out where the program dies of a signal or exits by a nonzero status.
    pthread_atfork(NULL, NULL, strain_stderr_forget);
    if (is_program) {
        on_exit(strain_stderr_at_exit, NULL);
        strain_tail_at_exit = 1;
    }
    strain_keeping_stderr = 1;
    strain_preload_install(is_program);
    // Counted from here, past the probe's own start: its dlsym misses and the read of its
    // own stack (pthread_getattr_np's fopen of /proc/self/maps) made 9 allocations, 2,214
    // bytes, in a program that makes none (re-trial 33l, F5).
    if (strain_allocations_pid == getpid() && strain_allocations_path[0] != 0) strain_alloc_begin(0);
}

// The probe's handlers, its dump and its signals, installed in this process (the rest of strain_preload_start).
static void strain_preload_install(int is_program) {
    if (pthread_key_create(&strain_thread_key, strain_thread_ended) != 0) return;
    if (is_program && strain_dump_install(STRAIN_PRELOAD_DUMP_THREADS, STRAIN_PRELOAD_DUMP_FRAMES) != 0) return;
    if (strain_probe_install(-1, STRAIN_PRELOAD_FRAMES) != 0) return;
    if (!is_program) {
        strain_preload_active = 1;
        return;
    }
    // SIGQUIT asks for a dump unless something before us (a library's
    // constructor, the parent's SIG_IGN) already has a use for it.
    // Otherwise it is marked as the program's (`sigquit-PID`), and `strain dump` asks with SIGSYS.
    struct sigaction quit;
    if (strain_real_sigaction(SIGQUIT, NULL, &quit) == 0 && !(quit.sa_flags & SA_SIGINFO) && quit.sa_handler == SIG_DFL) {
        strain_probe_answer_dumps_on(SIGQUIT);
    } else {
        strain_probe_release_dump_signal(0, NULL);
    }
    strain_preload_active = 1;
}

// MARK: - pthread_create

typedef struct {
    void *(*start)(void *);
    void *argument;
} strain_thread_start;

_Static_assert(sizeof(strain_thread_start) <= STRAIN_RESERVED_SCRATCH, "the start routine fits the reserved stack's scratch bytes");

// The new thread's first code: its alternate stack (reserved by its creator, the
// start routine in its scratch bytes) is installed before the program's code runs.
// The start routine is a tail call (musttail, even in a debug build): it runs where
// glibc's start_thread would have called it (a plain call left this frame under it:
// a 64 KiB thread began 176 bytes deeper than alone; now 128, the probe's static TLS,
// which glibc places at the top of every thread's stack).
static void *strain_thread_trampoline(void *reserved) {
    void *(*start)(void *);
    void *argument;
    {
        strain_thread_start boxed;
        memcpy(&boxed, strain_thread_reserved_scratch(reserved), sizeof(boxed));
        start = boxed.start;
        argument = boxed.argument;
    }
    if (strain_thread_install_reserved_alternate_stack(reserved) == 0) pthread_setspecific(strain_thread_key, (void *)1);
    __attribute__((musttail)) return start(argument);
}

static int strain_create_thread(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    if (!strain_preload_active) return strain_real_pthread_create(thread, attributes, start, argument);
    // No malloc here and no free on the new thread: a thread that never allocates
    // would otherwise get glibc's per-thread cache and an arena for our sake.
    void *reserved = strain_thread_reserve_alternate_stack();
    if (reserved == NULL) return strain_real_pthread_create(thread, attributes, start, argument);
    strain_thread_start boxed = {start, argument};
    memcpy(strain_thread_reserved_scratch(reserved), &boxed, sizeof(boxed));
    int status = strain_real_pthread_create(thread, attributes, strain_thread_trampoline, reserved);
    if (status != 0) strain_thread_unreserve_alternate_stack(reserved);
    return status;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    strain_find_real_functions();
    int traced = strain_tsan_func_entry != NULL && strain_tsan_func_exit != NULL;
    if (traced) strain_tsan_func_entry(__builtin_return_address(0));
    int status = strain_create_thread(thread, attributes, start, argument);
    if (traced) strain_tsan_func_exit();
    return status;
}

// MARK: - sigaction and signal

// The process that wrote this image's handlers file, and its lines so far: 0 in a
// fresh image (after an exec), another pid in a forked child, either of which starts
// its file anew.
static pid_t strain_handlers_pid;
static int strain_handlers_lines;
// The catching handlers this image installed per signal (at most 255 counted), kept
// across a fork with the handlers themselves: a forked child's file begins with them.
static unsigned char strain_handler_installs[65];

// The signals (1-31) this image started with ignored, read by the constructor before
// the runtime's start-up: a runtime installs no handler of its own for one (CPython
// leaves SIGINT ignored in a script's background job), so the program's first install
// is its own (it was taken for CPython's: re-trial 33e). Kept across a fork.
static unsigned char strain_ignored_at_start[32];

static void strain_note_ignored_at_start(void) {
    for (int number = 1; number < 32; number++) {
        struct sigaction current;
        if (strain_real_sigaction(number, NULL, &current) == 0 && !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) {
            strain_ignored_at_start[number] = 1;
        }
    }
}

// Appends one line per signal number in `signals` (each 1-64, or minus one ignored at
// start, written `-N`) to handlers-PID.txt, as far as the file's limit allows; `fresh`
// truncates the file first.
static void strain_write_handler_lines(const int *signals, int count, int fresh) {
    char name[48];
    if (!strain_probe_record_name(name, sizeof(name), STRAIN_PRELOAD_HANDLERS_PREFIX, ".txt")) return;
    char lines[4 * 96];
    size_t length = 0;
    for (int index = 0; index < count && length + 4 <= sizeof(lines) && strain_handlers_lines < STRAIN_PRELOAD_HANDLER_LINES; index++) {
        int signal_number = signals[index];
        if (signal_number < 0) {
            lines[length++] = '-';
            signal_number = -signal_number;
        }
        if (signal_number >= 10) lines[length++] = (char)('0' + signal_number / 10);
        lines[length++] = (char)('0' + signal_number % 10);
        lines[length++] = '\n';
        strain_handlers_lines++;
    }
    if (length == 0 && !fresh) return;
    strain_preload_record_write(name, O_WRONLY | O_APPEND | O_CREAT | (fresh ? O_TRUNC : 0), lines, length);
}

// This process's handlers file, begun anew with the signals its image started with
// ignored and the installs it inherited (at most 3 a signal). Async-signal-safe.
static void strain_begin_handler_notes(void) {
    strain_handlers_pid = getpid();
    strain_handlers_lines = 0;
    int inherited[96];
    int count = 0;
    for (int number = 1; number < 32; number++) {
        if (strain_ignored_at_start[number]) inherited[count++] = -number;
    }
    for (int number = 1; number <= 64; number++) {
        for (int times = 0; times < strain_handler_installs[number] && times < 3 && count < 96; times++) inherited[count++] = number;
    }
    strain_write_handler_lines(inherited, count, 1);
}

// In a forked child (pthread_atfork): its file at once, when the parent had installed
// a handler of its own (a signal installed twice; a runtime installs its own once), so
// a worker forked after `signal.signal(SIGINT, …)` keeps its parent's count though it
// installs nothing itself (it was called `deadlocked`: re-trial 33d). Not otherwise: a
// program that forks often would leave a file per child.
static void strain_handler_notes_after_fork(void) {
    for (int number = 1; number <= 64; number++) {
        if (strain_handler_installs[number] >= 2) {
            strain_begin_handler_notes();
            return;
        }
    }
}

// Notes a handler the program installs for `signal_number` (not a default or an
// ignore) as one line of `handlers-PID.txt`. Async-signal-safe (a handler may
// install another): write(2)s of short lines to a file opened O_APPEND. Every
// process of the tree that runs a counted runtime notes its own, since a
// descendant's stall is judged by them too (a launcher's Python service installs
// its own SIGINT handler); a forked child's file begins with the installs it
// inherited, at most 3 a signal (a runtime installs its own once), so a
// `multiprocessing` worker's own install is told from CPython's.
static void strain_note_handler(int signal_number, const struct sigaction *action) {
    if (action == NULL || signal_number <= 0 || signal_number > 64) return;
    if (strain_root_pid == 0 || !strain_noting_handlers) return;
    if (!(action->sa_flags & SA_SIGINFO) && (action->sa_handler == SIG_DFL || action->sa_handler == SIG_IGN)) return;
    if (strain_handlers_pid != getpid()) strain_begin_handler_notes();
    if (strain_handler_installs[signal_number] < 255) strain_handler_installs[signal_number]++;
    strain_write_handler_lines(&signal_number, 1, 0);
}

int sigaction(int signal_number, const struct sigaction *action, struct sigaction *old) {
    strain_find_real_functions();
    strain_note_handler(signal_number, action);
    if (!strain_preload_active || !strain_probe_owns_signal(signal_number)) {
        return strain_real_sigaction(signal_number, action, old);
    }
    if (signal_number == strain_probe_dump_signal() && action != NULL) {
        int wants_default = !(action->sa_flags & SA_SIGINFO) && action->sa_handler == SIG_DFL;
        if (!wants_default) {
            // The program uses SIGQUIT itself: it is the program's from now on.
            if (old != NULL) strain_probe_program_action(signal_number, NULL, old);
            int status = strain_probe_release_dump_signal(signal_number, action);
            if (status != 0) {
                errno = status;
                return -1;
            }
            return 0;
        }
    }
    // The probe stays installed; the program's handler is kept and chained to.
    strain_probe_program_action(signal_number, action, old);
    return 0;
}

__sighandler_t signal(int signal_number, __sighandler_t handler) {
    strain_find_real_functions();
    if (!strain_preload_active || !strain_probe_owns_signal(signal_number)) {
        struct sigaction noted;
        memset(&noted, 0, sizeof(noted));
        noted.sa_handler = handler;
        strain_note_handler(signal_number, &noted);
        return strain_real_signal(signal_number, handler);
    }
    struct sigaction action, old;
    memset(&action, 0, sizeof(action));
    action.sa_handler = handler;
    // glibc's signal() has BSD semantics.
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signal_number, &action, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

// MARK: - exec, posix_spawn, system and popen

// Every way a program starts another program through libc, so the probe follows
// it: the programs's calls bind here, not to glibc's (whose own internal calls,
// execvp's to execve say, never reach an interposer: each is covered here). Each
// passes through unchanged unless this probe follows; execs in the program's own
// pid are noted in its images file either way, so strain knows whether the image
// that ended had a probe. Rules: vfork-safe (no malloc, no locks) up to the call.

typedef int (*strain_execve_function)(const char *, char *const[], char *const[]);
typedef int (*strain_fexecve_function)(int, char *const[], char *const[]);
typedef int (*strain_spawn_function)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[], char *const[]);
typedef int (*strain_system_function)(const char *);
typedef FILE *(*strain_popen_function)(const char *, const char *);

static strain_execve_function strain_real_execve, strain_real_execvpe;
static strain_fexecve_function strain_real_fexecve;
static strain_spawn_function strain_real_posix_spawn, strain_real_posix_spawnp;
static strain_system_function strain_real_system;
static strain_popen_function strain_real_popen;

// Found in the constructor's process before any fork (dlsym is not vfork-safe),
// and again on first use by a process whose probe never started.
__attribute__((constructor)) static void strain_find_exec_functions(void) {
    if (strain_real_execve != NULL) return;
    strain_real_execvpe = (strain_execve_function)dlsym(RTLD_NEXT, "execvpe");
    strain_real_fexecve = (strain_fexecve_function)dlsym(RTLD_NEXT, "fexecve");
    strain_real_posix_spawn = (strain_spawn_function)dlsym(RTLD_NEXT, "posix_spawn");
    strain_real_posix_spawnp = (strain_spawn_function)dlsym(RTLD_NEXT, "posix_spawnp");
    strain_real_system = (strain_system_function)dlsym(RTLD_NEXT, "system");
    strain_real_popen = (strain_popen_function)dlsym(RTLD_NEXT, "popen");
    strain_real_execve = (strain_execve_function)dlsym(RTLD_NEXT, "execve");
}

typedef struct {
    int kind;  // 0 execve, 1 execvpe, 2 fexecve
    const char *path;
    int fd;
    char *const *argv;
} strain_exec_call;

static int strain_call_exec(void *context, char *const envp[]) {
    strain_exec_call *call = context;
    switch (call->kind) {
    case 0: return strain_real_execve(call->path, call->argv, envp);
    case 1: return strain_real_execvpe(call->path, call->argv, envp);
    default: return strain_real_fexecve(call->fd, call->argv, envp);
    }
}

static int strain_exec(strain_exec_call call, char *const envp[]) {
    strain_find_exec_functions();
    strain_note_image("exec", call.path != NULL ? call.path : "(a file descriptor)");
    int status = strain_following ? strain_with_followed_environment(envp, strain_call_exec, &call) : strain_call_exec(&call, envp);
    int saved = errno;
    strain_note_image("exec-failed", NULL);
    errno = saved;
    return status;
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    return strain_exec((strain_exec_call){0, path, -1, argv}, envp);
}

int execvpe(const char *file, char *const argv[], char *const envp[]) {
    return strain_exec((strain_exec_call){1, file, -1, argv}, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[]) {
    return strain_exec((strain_exec_call){2, NULL, fd, argv}, envp);
}

int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

// The list forms: their arguments gathered into an array on the stack.
#define STRAIN_GATHER_ARGUMENTS(first, list_name, extra)              \
    va_list counting;                                                 \
    va_start(counting, first);                                        \
    size_t count = 1;                                                 \
    while (va_arg(counting, char *) != NULL) count++;                 \
    va_end(counting);                                                 \
    char *list_name[count + 1];                                       \
    va_list arguments;                                                \
    va_start(arguments, first);                                       \
    list_name[0] = (char *)(first);                                   \
    for (size_t i = 1; i <= count; i++) list_name[i] = va_arg(arguments, char *); \
    extra;                                                            \
    va_end(arguments)

int execl(const char *path, const char *argument, ...) {
    STRAIN_GATHER_ARGUMENTS(argument, argv, (void)0);
    return execve(path, argv, environ);
}

int execlp(const char *file, const char *argument, ...) {
    STRAIN_GATHER_ARGUMENTS(argument, argv, (void)0);
    return execvpe(file, argv, environ);
}

int execle(const char *path, const char *argument, ...) {
    char *const *envp;
    STRAIN_GATHER_ARGUMENTS(argument, argv, envp = va_arg(arguments, char *const *));
    return execve(path, argv, envp);
}

typedef struct {
    strain_spawn_function function;
    pid_t *pid;
    const char *path;
    const posix_spawn_file_actions_t *actions;
    const posix_spawnattr_t *attributes;
    char *const *argv;
} strain_spawn_call;

static int strain_call_spawn(void *context, char *const envp[]) {
    strain_spawn_call *call = context;
    return call->function(call->pid, call->path, call->actions, call->attributes, call->argv, envp);
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attributes,
                char *const argv[], char *const envp[]) {
    strain_find_exec_functions();
    strain_spawn_call call = {strain_real_posix_spawn, pid, path, actions, attributes, argv};
    return strain_following ? strain_with_followed_environment(envp, strain_call_spawn, &call) : strain_call_spawn(&call, envp);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attributes,
                 char *const argv[], char *const envp[]) {
    strain_find_exec_functions();
    strain_spawn_call call = {strain_real_posix_spawnp, pid, file, actions, attributes, argv};
    return strain_following ? strain_with_followed_environment(envp, strain_call_spawn, &call) : strain_call_spawn(&call, envp);
}

// system and popen spawn `/bin/sh -c` with `environ` from inside glibc, so the
// followed environment is `environ` for the length of the call. Another thread
// reading the environment meanwhile sees the probe's variables too; one that
// calls setenv meanwhile has its change undone (rare, and never in a program's
// first thread alone).
typedef struct {
    const char *command;
    const char *mode;
    FILE *stream;
} strain_shell_call;

static int strain_call_system(void *context, char *const envp[]) {
    strain_shell_call *call = context;
    char **saved = environ;
    environ = (char **)envp;
    int status = strain_real_system(call->command);
    environ = saved;
    return status;
}

static int strain_call_popen(void *context, char *const envp[]) {
    strain_shell_call *call = context;
    char **saved = environ;
    environ = (char **)envp;
    call->stream = strain_real_popen(call->command, call->mode);
    environ = saved;
    return 0;
}

int system(const char *command) {
    strain_find_exec_functions();
    strain_shell_call call = {command, NULL, NULL};
    if (!strain_following || command == NULL) return strain_real_system(command);
    return strain_with_followed_environment(environ, strain_call_system, &call);
}

FILE *popen(const char *command, const char *mode) {
    strain_find_exec_functions();
    strain_shell_call call = {command, mode, NULL};
    if (!strain_following) return strain_real_popen(command, mode);
    strain_with_followed_environment(environ, strain_call_popen, &call);
    return call.stream;
}

// One-shot libdispatch timers (`dispatch_after`, `dispatch_after_f`: Swift's `asyncAfter`):
// the latest deadline the process armed, published by address in timers-PID.txt, so that
// --stall does not call a program deadlocked while a timer it armed can still wake it
// (re-trial 33j's NEW-8: blocked workers waiting for an `asyncAfter` block were called
// deadlocked, then the verdict withdrawn when it fired). From outside it cannot be seen:
// libdispatch arms one timerfd for its earliest deadline, and its own once-a-second pool
// monitor is always that. dispatch_time_t's encoding (libdispatch's time.h): 0 is now, all
// ones forever; bits 63 and 62 set, the negated wall-clock time (all ones but the last:
// now); bit 63 alone, the continuous clock (CLOCK_BOOTTIME); neither, the uptime clock,
// CLOCK_MONOTONIC on Linux (measured: `DispatchTime.now()` within 2 µs of it).
typedef void (*strain_dispatch_after_function)(uint64_t, void *, void *);
typedef void (*strain_dispatch_after_f_function)(uint64_t, void *, void *, void (*)(void *));
static _Atomic(strain_dispatch_after_function) strain_real_dispatch_after;
static _Atomic(strain_dispatch_after_f_function) strain_real_dispatch_after_f;
static _Atomic uint64_t strain_dispatch_deadline;
// The process that wrote timers-PID.txt (a forked child writes its own: same address, its pid).
static _Atomic pid_t strain_dispatch_published;

static uint64_t strain_clock_ns(clockid_t clock) {
    struct timespec now;
    if (clock_gettime(clock, &now) != 0) return 0;
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

static void strain_publish_dispatch_deadline(void) {
    pid_t self = getpid();
    pid_t published = atomic_load_explicit(&strain_dispatch_published, memory_order_relaxed);
    if (published == self || !atomic_compare_exchange_strong(&strain_dispatch_published, &published, self)) return;
    char name[48];
    if (!strain_probe_record_name(name, sizeof(name), STRAIN_PRELOAD_TIMERS_PREFIX, ".txt")) return;
    char line[24] = "0x";
    size_t length = 2;
    uintptr_t address = (uintptr_t)&strain_dispatch_deadline;
    for (int shift = (int)sizeof(address) * 8 - 4; shift >= 0; shift -= 4) line[length++] = "0123456789abcdef"[(address >> shift) & 0xf];
    line[length++] = '\n';
    strain_preload_record_write(name, O_WRONLY | O_CREAT | O_TRUNC, line, length);
}

static void strain_note_dispatch_deadline(uint64_t when) {
    const uint64_t forever = ~0ULL, wall_now = ~1ULL, continuous = 1ULL << 63, wall = 1ULL << 62;
    if (when == forever || when == 0) return;
    uint64_t monotonic = strain_clock_ns(CLOCK_MONOTONIC);
    uint64_t value, now;
    if ((when & continuous) && (when & wall)) {
        if (when == wall_now) return;
        value = (uint64_t)0 - when;
        now = strain_clock_ns(CLOCK_REALTIME);
    } else if (when & continuous) {
        value = when & ~continuous;
        now = strain_clock_ns(CLOCK_BOOTTIME);
    } else {
        value = when;
        now = monotonic;
    }
    // A deadline past fires at once; one beyond the encoding's range is forever.
    if (value <= now || value >= wall) return;
    uint64_t deadline = monotonic + (value - now);
    uint64_t latest = atomic_load_explicit(&strain_dispatch_deadline, memory_order_relaxed);
    while (deadline > latest &&
           !atomic_compare_exchange_weak_explicit(&strain_dispatch_deadline, &latest, deadline, memory_order_relaxed, memory_order_relaxed)) {
    }
    strain_publish_dispatch_deadline();
}

void dispatch_after(uint64_t when, void *queue, void *block) {
    strain_dispatch_after_function real = atomic_load_explicit(&strain_real_dispatch_after, memory_order_acquire);
    if (!real) {
        real = (strain_dispatch_after_function)dlsym(RTLD_NEXT, "dispatch_after");
        atomic_store_explicit(&strain_real_dispatch_after, real, memory_order_release);
    }
    strain_note_dispatch_deadline(when);
    if (real) real(when, queue, block);
}

void dispatch_after_f(uint64_t when, void *queue, void *context, void (*work)(void *)) {
    strain_dispatch_after_f_function real = atomic_load_explicit(&strain_real_dispatch_after_f, memory_order_acquire);
    if (!real) {
        real = (strain_dispatch_after_f_function)dlsym(RTLD_NEXT, "dispatch_after_f");
        atomic_store_explicit(&strain_real_dispatch_after_f, real, memory_order_release);
    }
    strain_note_dispatch_deadline(when);
    if (real) real(when, queue, context, work);
}

#pragma clang attribute pop
