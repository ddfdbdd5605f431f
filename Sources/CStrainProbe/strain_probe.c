// The fault handler and the per-thread stack bookkeeping it relies on.
//
// Rules the handler keeps (it may run on any thread, at any instruction):
// - no malloc, no locks, no stdio: it formats numbers by hand into static buffers
//   and writes them with write(2);
// - it runs on the thread's alternate signal stack (SA_ONSTACK), prepared before
//   the work started, because an overflowed stack has no room left;
// - it records raw instruction pointers only (~0.7 µs a frame); the parent names
//   them after the child is gone (~55 µs a name would be far too slow here);
// - one fault is recorded per process: a second faulting thread waits until the
//   first has written its record, then passes its signal on too;
// - after recording, it restores the disposition it replaced (the program's own
//   handler, or the default) and passes the signal on, so the process ends (or
//   goes on) as it would have without the probe: 139 stays 139, a core is dumped,
//   the program's handler or the Swift backtracer still runs.
#include "strain_probe.h"
#include "strain_internal.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

// The same two lines as CLibunwind/shim.h: the system library target supplies
// the link flag (-lunwind), C includes the header directly.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>  // renameat(2)
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STRAIN_ALTSTACK_SIZE (256 * 1024)
#define STRAIN_OUT_BUFFER_SIZE (64 * 1024)

// SIGSYS also carries the dump requests (strain_watch.c).
static const int strain_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSYS};
#define STRAIN_SIGNAL_COUNT (sizeof(strain_signals) / sizeof(strain_signals[0]))
#define STRAIN_MAX_SIGNAL 65

// Process-wide state, set up before any fault by strain_probe_install.
static int strain_record_fd = 2;
static uintptr_t *strain_frames;        // head half, then a ring for the tail half
static size_t strain_frame_capacity;
// 0: nothing yet; 1: a fault is being recorded, or a trial claimed its result
// (strain_claim_result); 2: a fault's record is written.
static atomic_int strain_capturing;
static volatile long strain_depth;
static volatile long strain_depth_max;
static char strain_out[STRAIN_OUT_BUFFER_SIZE];

// What each owned signal's disposition was, or what the program set since: the
// handler restores it before passing the signal on.
static struct sigaction strain_program_actions[STRAIN_MAX_SIGNAL];
static volatile sig_atomic_t strain_owned[STRAIN_MAX_SIGNAL];
static volatile sig_atomic_t strain_dump_signal_number;
strain_sigaction_function strain_sigaction = sigaction;

// Per-thread state, filled by strain_thread_prepare outside the handler. The
// initial-exec model keeps reads in the handler free of __tls_get_addr (and its
// allocation) in libStrainProbe.so too, which is preloaded, never dlopen'd.
#define STRAIN_TLS __thread __attribute__((tls_model("initial-exec")))
static STRAIN_TLS int strain_thread_ready;  // the alternate stack is installed
static STRAIN_TLS int strain_thread_bounds_known;
static STRAIN_TLS strain_stack_bounds strain_thread_stack;
static STRAIN_TLS char *strain_thread_altstack;

// MARK: - Async-signal-safe output

void strain_writer_flush(strain_writer *writer) {
    size_t done = 0;
    while (writer->fd >= 0 && done < writer->used) {
        ssize_t n = write(writer->fd, writer->buffer + done, writer->used - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;  // the reader is gone; nothing more can be said
        }
        done += (size_t)n;
    }
    writer->used = 0;
}

void strain_writer_put(strain_writer *writer, const char *text, size_t length) {
    while (length > 0) {
        if (writer->used == writer->capacity) strain_writer_flush(writer);
        size_t room = writer->capacity - writer->used;
        size_t chunk = length < room ? length : room;
        memcpy(writer->buffer + writer->used, text, chunk);
        writer->used += chunk;
        text += chunk;
        length -= chunk;
    }
}

void strain_writer_string(strain_writer *writer, const char *text) { strain_writer_put(writer, text, strlen(text)); }

void strain_writer_hex(strain_writer *writer, uintptr_t value) {
    char digits[2 + 2 * sizeof(uintptr_t)];
    size_t at = sizeof(digits);
    do {
        digits[--at] = "0123456789abcdef"[value & 0xf];
        value >>= 4;
    } while (value != 0);
    digits[--at] = 'x';
    digits[--at] = '0';
    strain_writer_put(writer, digits + at, sizeof(digits) - at);
}

void strain_writer_decimal(strain_writer *writer, long long value) {
    char digits[24];
    size_t at = sizeof(digits);
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[--at] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0) digits[--at] = '-';
    strain_writer_put(writer, digits + at, sizeof(digits) - at);
}

void strain_writer_field_hex(strain_writer *writer, const char *name, uintptr_t value) {
    strain_writer_string(writer, name);
    strain_writer_put(writer, " ", 1);
    strain_writer_hex(writer, value);
    strain_writer_put(writer, "\n", 1);
}

void strain_writer_field_decimal(strain_writer *writer, const char *name, long long value) {
    strain_writer_string(writer, name);
    strain_writer_put(writer, " ", 1);
    strain_writer_decimal(writer, value);
    strain_writer_put(writer, "\n", 1);
}

// open/read/write are async-signal-safe: /proc/self/maps as it is at the fault,
// so the parent can map each address to its module and file offset.
void strain_writer_file(strain_writer *writer, const char *path, int skip_newline_end) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char chunk[4096];
    char last = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (skip_newline_end && chunk[n - 1] == '\n') {
            if (last) strain_writer_put(writer, &last, 1);
            strain_writer_put(writer, chunk, (size_t)n - 1);
            last = '\n';
        } else {
            if (last) strain_writer_put(writer, &last, 1);
            strain_writer_put(writer, chunk, (size_t)n);
            last = 0;
        }
    }
    close(fd);
}

char strain_record_directory[PATH_MAX];
// The record folder as the probe was given it (device and inode, not following a
// link): a record is written only into that folder, never where a name put in its
// place points.
static dev_t strain_record_device;
static ino_t strain_record_inode;

int strain_record_name(char *out, size_t capacity, const char *stem, long sequence, const char *extension) {
    if (strain_record_directory[0] == 0) return 0;
    char pid[24], number[24];
    size_t at = sizeof(pid);
    pid[--at] = 0;
    long value = (long)getpid();
    do { pid[--at] = (char)('0' + value % 10); value /= 10; } while (value != 0);
    const char *pid_text = pid + at;
    const char *number_text = "";
    if (sequence >= 0) {
        at = sizeof(number);
        number[--at] = 0;
        value = sequence;
        do { number[--at] = (char)('0' + value % 10); value /= 10; } while (value != 0);
        number[--at] = '-';
        number_text = number + at;
    }
    size_t need = strlen(stem) + strlen(pid_text) + strlen(number_text) + strlen(extension) + 1;
    if (need > capacity) return 0;
    out[0] = 0;
    // strcat is async-signal-safe in practice (it touches only its arguments).
    strcat(out, stem);
    strcat(out, pid_text);
    strcat(out, number_text);
    strcat(out, extension);
    return 1;
}

int strain_probe_record_to_directory(const char *directory) {
    if (directory == NULL || strlen(directory) + 64 >= PATH_MAX) return ENAMETOOLONG;
    struct stat info;
    if (lstat(directory, &info) != 0) return errno;
    if (!S_ISDIR(info.st_mode)) return ENOTDIR;
    strain_record_device = info.st_dev;
    strain_record_inode = info.st_ino;
    strcpy(strain_record_directory, directory);
    return 0;
}

/// The record folder, opened for one write: the folder itself (O_NOFOLLOW: not a
/// link put in its place) and only while it is the one the probe was given. -1
/// when there is none, or it was deleted or replaced: the record is not written.
static int strain_record_folder(void) {
    if (strain_record_directory[0] == 0) return -1;
    int folder = open(strain_record_directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (folder < 0) return -1;
    struct stat info;
    if (fstat(folder, &info) != 0 || info.st_dev != strain_record_device || info.st_ino != strain_record_inode) {
        close(folder);
        return -1;
    }
    return folder;
}

int strain_probe_record_name(char *out, size_t capacity, const char *stem, const char *extension) {
    return strain_record_name(out, capacity, stem, -1, extension);
}

int strain_probe_record_open(const char *name, int flags) {
    int folder = strain_record_folder();
    if (folder < 0) return -1;
    if (flags & O_TRUNC) {
        // A fresh file: whatever the program left under the name (a link to one of
        // its files, say) is removed, never written through, and the file is made anew.
        unlinkat(folder, name, 0);
        flags = (flags & ~O_TRUNC) | O_CREAT | O_EXCL;
    }
    // O_NOFOLLOW: a link under a record's name (appended to, or made in a race) is not followed.
    int fd = openat(folder, name, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
    int saved = errno;
    close(folder);
    errno = saved;
    return fd;
}

int strain_record_rename(const char *from, const char *to) {
    int folder = strain_record_folder();
    if (folder < 0) return -1;
    int status = renameat(folder, from, folder, to);
    close(folder);
    return status;
}

int strain_record_remove(const char *name) {
    int folder = strain_record_folder();
    if (folder < 0) return -1;
    int status = unlinkat(folder, name, 0);
    close(folder);
    return status;
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
//
// A frame larger than the guard and the 1 MiB under it (300 KiB frames on a
// thread, 3 MiB on the main thread) moves the stack pointer itself out of the
// stack before it touches anything: the fault is then at the stack pointer, far
// under the stack. It is an overflow too when the stack pointer lies under the
// stack, at most STRAIN_FRAME_REACH under it, and the address near it (a frame's
// first touch is above the stack pointer, or in the 128-byte red zone under it).
#define STRAIN_FRAME_REACH ((uintptr_t)64 * 1024 * 1024)
static int strain_is_overflow(uintptr_t address, uintptr_t sp, const strain_stack_bounds *bounds) {
    if (bounds == NULL || address == 0) return 0;
    const uintptr_t low = bounds->low;
    const size_t page = 4096;
    if (address >= low + page) return 0;
    if (sp != 0 && sp < low && low - sp <= STRAIN_FRAME_REACH && address + page >= sp) return 1;
    size_t below = bounds->guard_size + 1024 * 1024;
    uintptr_t floor = low > below ? low - below : 0;
    if (address < floor) return 0;
    const size_t bottom = 64 * 1024;
    return sp == 0 || sp < low + bottom;
}

// One line of /proc/self/maps: `start-end perms …`; 0 when it is not one.
static int strain_parse_mapping(const char *line, size_t length, uintptr_t *start, uintptr_t *end, char perms[4]) {
    size_t at = 0;
    uintptr_t values[2] = {0, 0};
    for (int field = 0; field < 2; field++) {
        size_t digits = 0;
        for (; at < length; at++, digits++) {
            char c = line[at];
            int value = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (value < 0) break;
            values[field] = values[field] * 16 + (uintptr_t)value;
        }
        if (digits == 0 || at >= length || line[at] != (field == 0 ? '-' : ' ')) return 0;
        at++;
    }
    if (at + 4 > length) return 0;
    memcpy(perms, line + at, 4);
    *start = values[0];
    *end = values[1];
    return 1;
}

// The stack of a thread whose bounds were never asked for (a thread under
// `strain exec` skips pthread_getattr_np, about 0.6 µs of every pthread_create):
// the readable and writable mapping holding `sp`, and the PROT_NONE guard right
// under it, from /proc/self/maps. When `sp` itself ran into the guard, the stack
// is the mapping right above. glibc maps a thread's guard and stack as one block,
// so this is what pthread_getattr_np would have said. When no mapping holds `sp`
// (a frame larger than the guard moved it under the stack), the stack is the
// nearest mapping above it, at most STRAIN_FRAME_REACH above, read as if `sp`
// were in it. Only open, read and close: async-signal-safe.
static int strain_stack_from_maps(uintptr_t sp, strain_stack_bounds *out) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buffer[4096];
    size_t used = 0;
    uintptr_t previous_start = 0, previous_end = 0;
    int previous_guard = 0, in_guard = 0, found = 0, done = 0;
    size_t guard = 0;
    while (!done) {
        ssize_t n = read(fd, buffer + used, sizeof(buffer) - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += (size_t)n;
        size_t line_start = 0;
        for (size_t i = 0; i < used && !done; i++) {
            if (buffer[i] != '\n') continue;
            uintptr_t start, end;
            char perms[4];
            if (strain_parse_mapping(buffer + line_start, i - line_start, &start, &end, perms)) {
                int writable = perms[0] == 'r' && perms[1] == 'w';
                int is_guard = perms[0] == '-' && perms[1] == '-' && perms[2] == '-';
                if (in_guard) {
                    if (start == previous_end && writable) {
                        out->low = start;
                        out->high = end;
                        out->guard_size = guard;
                        found = 1;
                    }
                    done = 1;
                } else if ((sp >= start && sp < end) || (sp < start && start - sp <= STRAIN_FRAME_REACH)) {
                    if (writable) {
                        out->low = start;
                        out->high = end;
                        out->guard_size = previous_guard && previous_end == start ? previous_end - previous_start : 0;
                        found = 1;
                        done = 1;
                    } else if (is_guard) {
                        in_guard = 1;
                        guard = end - start;
                    } else {
                        done = 1;
                    }
                } else if (sp < start) {
                    done = 1;
                }
                previous_start = start;
                previous_end = end;
                previous_guard = is_guard;
            }
            line_start = i + 1;
        }
        memmove(buffer, buffer + line_start, used - line_start);
        used -= line_start;
        if (used == sizeof(buffer)) used = 0;  // a line longer than the buffer: skip it
    }
    close(fd);
    return found;
}


// MARK: - Last words (the message a runtime left before it aborted or trapped)

// glibc's `__abort_msg` (GLIBC_PRIVATE, set by __libc_message before abort since
// 2.27: "free(): double free detected in tcache 2") and the Swift runtime's fatal
// error buffer (`swift_getFatalErrorMessageBuffer`, an atomic `const char *` set by
// swift_reportError before it traps: "Fatal error: Index out of range"). Both are
// found when the probe is installed, in ordinary code; the handler only reads them.
struct strain_abort_msg { unsigned int size; char msg[]; };
static struct strain_abort_msg **strain_glibc_abort_message;
static const char *_Atomic *strain_swift_fatal_message;

static void strain_find_last_words(void) {
    if (strain_glibc_abort_message == NULL) strain_glibc_abort_message = (struct strain_abort_msg **)dlsym(RTLD_DEFAULT, "__abort_msg");
    if (strain_swift_fatal_message == NULL) {
        void *(*buffer)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "swift_getFatalErrorMessageBuffer");
        if (buffer != NULL) strain_swift_fatal_message = (const char *_Atomic *)buffer();
    }
}

// `name text`: the text on one line, backslash, newline and control bytes escaped
// (\\, \n, \xHH), at most `limit` bytes of it; nothing when it is empty.
static void strain_writer_field_text(strain_writer *writer, const char *name, const char *text, size_t length, size_t limit) {
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' ' || text[length - 1] == 0)) length--;
    if (length == 0) return;
    if (length > limit) { text += length - limit; length = limit; }
    strain_writer_string(writer, name);
    strain_writer_put(writer, " ", 1);
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < length; i++) {
        unsigned char byte = (unsigned char)text[i];
        if (byte == '\\') {
            strain_writer_put(writer, "\\\\", 2);
        } else if (byte == '\n') {
            strain_writer_put(writer, "\\n", 2);
        } else if (byte < 0x20 || byte == 0x7f) {
            char escaped[4] = {'\\', 'x', digits[byte >> 4], digits[byte & 15]};
            strain_writer_put(writer, escaped, 4);
        } else {
            strain_writer_put(writer, (const char *)&byte, 1);
        }
    }
    strain_writer_put(writer, "\n", 1);
}

/// Bytes of a last-words message or a command line a record keeps (the end of a longer one).
#define STRAIN_TEXT_LIMIT 4096
static char strain_text_buffer[STRAIN_TEXT_LIMIT];

// The runtime's last words, the process's parent and its command line (NULs between
// the arguments), read with async-signal-safe calls only.
static void strain_write_process_fields(strain_writer *writer) {
    strain_writer_field_decimal(writer, "ppid", (long long)getppid());
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, strain_text_buffer, sizeof(strain_text_buffer));
        close(fd);
        if (got > 0) strain_writer_field_text(writer, "cmdline", strain_text_buffer, (size_t)got, STRAIN_TEXT_LIMIT);
    }
    if (strain_glibc_abort_message != NULL) {
        struct strain_abort_msg *message = *strain_glibc_abort_message;
        if (message != NULL) strain_writer_field_text(writer, "last_words", message->msg, strnlen(message->msg, STRAIN_TEXT_LIMIT * 4), STRAIN_TEXT_LIMIT);
    }
    if (strain_swift_fatal_message != NULL) {
        const char *message = atomic_load(strain_swift_fatal_message);
        if (message != NULL) strain_writer_field_text(writer, "last_words", message, strnlen(message, STRAIN_TEXT_LIMIT * 4), STRAIN_TEXT_LIMIT);
    }
}

// The number after `key` at the start of a line of `text` (`Threads:\t5`), or -1.
static long long strain_status_value(const char *text, ssize_t length, const char *key) {
    ssize_t key_length = (ssize_t)strlen(key);
    for (ssize_t i = 0; i + key_length <= length; i++) {
        if ((i > 0 && text[i - 1] != '\n') || memcmp(text + i, key, (size_t)key_length) != 0) continue;
        ssize_t j = i + key_length;
        while (j < length && (text[j] == ' ' || text[j] == '\t')) j++;
        long long value = 0;
        int digits = 0;
        for (; j < length && text[j] >= '0' && text[j] <= '9' && digits < 15; j++, digits++) value = value * 10 + (text[j] - '0');
        return digits > 0 ? value : -1;
    }
    return -1;
}

// The process's threads and peak RSS (VmHWM) as it faults, from /proc/self/status
// (open and read are async-signal-safe): a trial that died before the parent's first
// 5 ms sample was recorded with its start's counts (1 thread, 4.5 MiB).
static void strain_write_status_fields(strain_writer *writer) {
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t got = read(fd, strain_text_buffer, sizeof(strain_text_buffer));
    close(fd);
    if (got <= 0) return;
    long long threads = strain_status_value(strain_text_buffer, got, "Threads:");
    long long peak = strain_status_value(strain_text_buffer, got, "VmHWM:");
    if (threads > 0) strain_writer_field_decimal(writer, "threads", threads);
    if (peak > 0) strain_writer_field_decimal(writer, "peak_rss_kb", peak);
}

// Restores the disposition the probe replaced (or the one the program set
// since), then passes the signal on. A fault the kernel raised for an
// instruction (SIGSEGV, SIGBUS, SIGILL, SIGFPE) is simply returned to: the
// instruction runs again and faults again, now with the program's handler or
// the default action, with the real siginfo and context. A sent signal (abort's
// SIGABRT, kill) and a trap (int3 has been stepped over) are queued again to
// this thread, with the same siginfo where the kernel allows it; they arrive as
// soon as this handler returns.
static void strain_pass_on(int signal_number, siginfo_t *info) {
    if (signal_number > 0 && signal_number < STRAIN_MAX_SIGNAL) {
        strain_owned[signal_number] = 0;
        const struct sigaction *action = &strain_program_actions[signal_number];
        // To the default action, which ends the process: what it said on its standard
        // error last (a Rust program's panic or overflow message before its abort).
        if (!(action->sa_flags & SA_SIGINFO) && action->sa_handler == SIG_DFL) strain_stderr_write_tail();
        strain_sigaction(signal_number, action, NULL);
    }
    if (info->si_code > 0 && signal_number != SIGTRAP) return;
    pid_t pid = getpid();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, signal_number, info) != 0) {
        syscall(SYS_tgkill, pid, tid, signal_number);
    }
}

static int strain_program_has_handler(int signal_number) {
    const struct sigaction *action = &strain_program_actions[signal_number];
    return (action->sa_flags & SA_SIGINFO) ? action->sa_sigaction != NULL
        : (action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN);
}

static void strain_fault_handler(int signal_number, siginfo_t *info, void *context) {
    if (signal_number == SIGSYS && strain_is_dump_request(info)) {
        strain_dump_answer(info, context);
        return;
    }
    if (strain_is_process_dump_request(signal_number, info)) {
        strain_dump_process(signal_number, info, context);
        return;
    }
    if (signal_number == SIGQUIT) {
        // The dump signal, handed back to the program while this was on its way.
        strain_pass_on(signal_number, info);
        return;
    }
    if (signal_number == SIGSYS && strain_program_has_handler(SIGSYS)) {
        // A program that handles SIGSYS (a seccomp sandbox) does so on purpose.
        strain_pass_on(signal_number, info);
        return;
    }
    uint64_t fault_ns = strain_monotonic_ns();
    int expected = 0;
    if (!atomic_compare_exchange_strong(&strain_capturing, &expected, 1)) {
        // Another thread is writing its record, or the trial's report claimed
        // the result (strain_claim_result, which never lets go). Once a record
        // is written, pass this signal on as the first thread did.
        while (atomic_load(&strain_capturing) == 1) {
            struct timespec pause = {0, 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        strain_pass_on(signal_number, info);
        return;
    }

    uintptr_t address = (uintptr_t)info->si_addr;

    // Walk from the interrupted frame (strain_fault_walk.c): libunwind's cached
    // fast trace on a thread warmed for it, the unw_step loop otherwise.
    strain_fault_walk walk;
    strain_walk_interrupted(context, strain_frames, strain_frame_capacity, 0, &walk);
    size_t total = walk.total;
    uintptr_t first_sp = walk.first_sp;
    uintptr_t last_sp = walk.last_sp;
    int walk_end = walk.walk_end;
    uint64_t walked_ns = strain_monotonic_ns();
    strain_stack_bounds bounds = strain_thread_stack;
    int bounds_known = strain_thread_bounds_known || strain_stack_from_maps(first_sp != 0 ? first_sp : address, &bounds);
    int overflow = (signal_number == SIGSEGV || signal_number == SIGBUS) &&
        strain_is_overflow(address, first_sp, bounds_known ? &bounds : NULL);

    // A program under `strain exec` gets a file of its own in the run folder;
    // a trial writes to its result pipe.
    strain_writer writer = {strain_record_fd, strain_out, STRAIN_OUT_BUFFER_SIZE, 0};
    char path[PATH_MAX];
    char temporary[PATH_MAX];
    int to_file = strain_record_name(path, sizeof(path), "fault-", -1, ".txt")
        && strain_record_name(temporary, sizeof(temporary), "fault-", -1, ".tmp");
    if (to_file) writer.fd = strain_probe_record_open(temporary, O_WRONLY | O_CREAT | O_TRUNC);

    strain_writer_string(&writer, "STRAIN-FAULT 1\n");
    strain_writer_field_decimal(&writer, "signal", signal_number);
    strain_writer_field_decimal(&writer, "code", info->si_code);
    strain_writer_field_hex(&writer, "address", address);
    strain_writer_field_hex(&writer, "sp", first_sp);
    strain_writer_field_decimal(&writer, "pid", (long long)getpid());
    strain_writer_field_decimal(&writer, "tid", (long long)syscall(SYS_gettid));
    // Which thread died, by the name the program gave it (pthread_setname_np; the
    // program's own for its main thread): prctl is one system call.
    char thread_name[17] = {0};
    if (prctl(PR_GET_NAME, thread_name, 0, 0, 0) == 0 && thread_name[0] != 0) {
        strain_writer_field_text(&writer, "thread_name", thread_name, strnlen(thread_name, 16), 16);
    }
    strain_write_process_fields(&writer);
    strain_write_status_fields(&writer);
    strain_writer_field_decimal(&writer, "overflow", overflow);
    strain_writer_field_decimal(&writer, "prepared", strain_thread_ready);
    if (bounds_known) {
        strain_writer_field_hex(&writer, "stack_low", bounds.low);
        strain_writer_field_hex(&writer, "stack_high", bounds.high);
        strain_writer_field_decimal(&writer, "guard", (long long)bounds.guard_size);
    }
    strain_writer_field_decimal(&writer, "depth", strain_depth);
    strain_writer_field_decimal(&writer, "frames_total", (long long)total);
    strain_writer_field_decimal(&writer, "walk_end", walk_end);
    strain_writer_field_hex(&writer, "last_sp", last_sp);
    strain_writer_field_decimal(&writer, "walk_ns", (long long)(walked_ns - fault_ns));
    strain_writer_string(&writer, walk.fast ? "walk fast\n" : "walk step\n");
    if (walk.fallback != NULL) {
        strain_writer_string(&writer, "walk_fallback ");
        strain_writer_string(&writer, walk.fallback);
        strain_writer_put(&writer, "\n", 1);
    }

    // Frames in call order from the fault: the head as walked, then the tail from
    // its oldest frame. Frames between them were counted, not kept.
    strain_writer_field_decimal(&writer, "frames_head", (long long)walk.head_count);
    strain_writer_field_decimal(&writer, "frames_tail", (long long)walk.tail_count);
    strain_writer_walk_frames(&writer, &walk);
    strain_writer_string(&writer, "maps\n");
    strain_writer_file(&writer, "/proc/self/maps", 0);
    strain_writer_string(&writer, "end-maps\n");
    strain_writer_flush(&writer);
    strain_writer_field_decimal(&writer, "capture_ns", (long long)(strain_monotonic_ns() - fault_ns));
    strain_writer_string(&writer, "END\n");
    strain_writer_flush(&writer);
    if (to_file && writer.fd >= 0) {
        close(writer.fd);
        // renameat(2) is async-signal-safe: the record appears whole or not at all.
        strain_record_rename(temporary, path);
    }
    atomic_store(&strain_capturing, 2);

    // End as the process would have without the probe: the same signal, to the
    // same disposition it had (a trial's child: the default, so the parent sees
    // how it really ended).
    strain_pass_on(signal_number, info);
}

// MARK: - Setup (ordinary code)

void strain_probe_use_sigaction(strain_sigaction_function function) {
    if (function != NULL) strain_sigaction = function;
}

int strain_probe_owns_signal(int signal_number) {
    return signal_number > 0 && signal_number < STRAIN_MAX_SIGNAL && strain_owned[signal_number];
}

void strain_probe_program_action(int signal_number, const struct sigaction *action, struct sigaction *old) {
    if (signal_number <= 0 || signal_number >= STRAIN_MAX_SIGNAL) return;
    if (old != NULL) *old = strain_program_actions[signal_number];
    if (action != NULL) strain_program_actions[signal_number] = *action;
}

void strain_handler_mask(sigset_t *mask) {
    sigfillset(mask);
    static const int answered[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS, SIGQUIT};
    for (size_t i = 0; i < sizeof(answered) / sizeof(answered[0]); i++) sigdelset(mask, answered[i]);
}

static int strain_take_signal(int signal_number) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = strain_fault_handler;
    // SA_RESTART: a dump request that lands in a blocking read or lock wait of the
    // program resumes it, instead of making it fail with EINTR. The program's own
    // signals wait until the handler is done (strain_dump_keep_interruption).
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    strain_handler_mask(&action.sa_mask);
    struct sigaction previous;
    if (strain_sigaction(signal_number, &action, &previous) != 0) return errno;
    // Installed twice (a trial server's child after a fork): keep what was there first.
    if (!strain_owned[signal_number]) strain_program_actions[signal_number] = previous;
    strain_owned[signal_number] = 1;
    return 0;
}

int strain_probe_install(int record_fd, size_t max_frames) {
    if (max_frames < 2) max_frames = 2;
    if (strain_frames == NULL || strain_frame_capacity < max_frames) {
        size_t bytes = max_frames * sizeof(uintptr_t);
        void *frames = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (frames == MAP_FAILED) return errno;
        strain_frames = frames;
        strain_frame_capacity = max_frames;
    }
    strain_record_fd = record_fd;
    strain_find_last_words();

    if (record_fd >= 0) {
        struct sigaction ignore;
        memset(&ignore, 0, sizeof(ignore));
        ignore.sa_handler = SIG_IGN;
        strain_sigaction(SIGPIPE, &ignore, NULL);
    }
    for (size_t i = 0; i < STRAIN_SIGNAL_COUNT; i++) {
        int status = strain_take_signal(strain_signals[i]);
        if (status != 0) return status;
    }
    return strain_thread_prepare();
}

int strain_probe_answer_dumps_on(int signal_number) {
    if (signal_number <= 0 || signal_number >= STRAIN_MAX_SIGNAL) return EINVAL;
    int status = strain_take_signal(signal_number);
    if (status == 0) strain_dump_signal_number = signal_number;
    return status;
}

int strain_probe_release_dump_signal(int signal_number, const struct sigaction *action) {
    if (signal_number != strain_dump_signal_number) return EINVAL;
    if (signal_number != 0) {
        strain_dump_signal_number = 0;
        strain_owned[signal_number] = 0;
        if (action != NULL) strain_program_actions[signal_number] = *action;
        if (strain_sigaction(signal_number, &strain_program_actions[signal_number], NULL) != 0) return errno;
    }
    char path[PATH_MAX];
    if (strain_record_name(path, sizeof(path), "sigquit-", -1, "")) {
        int fd = strain_probe_record_open(path, O_WRONLY | O_CREAT | O_TRUNC);
        if (fd >= 0) close(fd);
    }
    return 0;
}

int strain_probe_dump_signal(void) { return strain_dump_signal_number; }

size_t strain_probe_frame_capacity(void) { return strain_frame_capacity; }

// Alternate stacks of ended threads, kept for the next threads: a program that
// creates and joins threads at a high rate pays mmap, mprotect and munmap (and
// munmap's TLB shootdown) only when the cache is empty or full. A try-lock, never
// a wait: after a fork in the middle of a take or a give, the child's cache
// stays busy and it maps and unmaps instead of deadlocking.
#define STRAIN_ALTSTACK_CACHE 64
static void *strain_altstack_cache[STRAIN_ALTSTACK_CACHE];
static int strain_altstack_cached;
static atomic_flag strain_altstack_busy = ATOMIC_FLAG_INIT;

// A region of a guard page and an alternate stack; NULL (errno set) when none could be mapped.
static char *strain_altstack_take(size_t page) {
    if (!atomic_flag_test_and_set_explicit(&strain_altstack_busy, memory_order_acquire)) {
        char *cached = strain_altstack_cached > 0 ? strain_altstack_cache[--strain_altstack_cached] : NULL;
        atomic_flag_clear_explicit(&strain_altstack_busy, memory_order_release);
        if (cached != NULL) return cached;
    }
    // The alternate stack has a PROT_NONE page below it, so a handler that ran
    // out of room faults visibly instead of writing over another mapping.
    char *region = mmap(NULL, STRAIN_ALTSTACK_SIZE + page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return NULL;
    mprotect(region, page, PROT_NONE);
    return region;
}

// Takes back a region no thread uses as its alternate stack any more.
static void strain_altstack_give(char *region, size_t page) {
    if (!atomic_flag_test_and_set_explicit(&strain_altstack_busy, memory_order_acquire)) {
        int kept = strain_altstack_cached < STRAIN_ALTSTACK_CACHE;
        if (kept) strain_altstack_cache[strain_altstack_cached++] = region;
        atomic_flag_clear_explicit(&strain_altstack_busy, memory_order_release);
        if (kept) return;
    }
    munmap(region, STRAIN_ALTSTACK_SIZE + page);
}

// The page size, read once (sysconf is a call on every thread's start and end).
static size_t strain_page_size(void) {
    static atomic_size_t cached;
    size_t page = atomic_load_explicit(&cached, memory_order_relaxed);
    if (page == 0) {
        page = (size_t)sysconf(_SC_PAGESIZE);
        atomic_store_explicit(&cached, page, memory_order_relaxed);
    }
    return page;
}

void strain_thread_prefill_alternate_stacks(int count) {
    const size_t page = strain_page_size();
    char *regions[STRAIN_ALTSTACK_CACHE];
    int taken = 0;
    while (taken < count && taken < STRAIN_ALTSTACK_CACHE) {
        char *region = strain_altstack_take(page);
        if (region == NULL) break;
        regions[taken++] = region;
    }
    while (taken > 0) strain_altstack_give(regions[--taken], page);
}

void strain_thread_drain_alternate_stacks(void) {
    const size_t page = strain_page_size();
    for (;;) {
        char *region = NULL;
        if (!atomic_flag_test_and_set_explicit(&strain_altstack_busy, memory_order_acquire)) {
            region = strain_altstack_cached > 0 ? strain_altstack_cache[--strain_altstack_cached] : NULL;
            atomic_flag_clear_explicit(&strain_altstack_busy, memory_order_release);
        }
        if (region == NULL) return;
        munmap(region, STRAIN_ALTSTACK_SIZE + page);
    }
}

void *strain_thread_reserve_alternate_stack(void) {
    char *region = strain_altstack_take(strain_page_size());
    return region == NULL ? NULL : region + strain_page_size();
}

void strain_thread_unreserve_alternate_stack(void *reserved) {
    if (reserved != NULL) strain_altstack_give((char *)reserved - strain_page_size(), strain_page_size());
}

void *strain_thread_reserved_scratch(void *reserved) {
    return (char *)reserved + STRAIN_ALTSTACK_SIZE - STRAIN_RESERVED_SCRATCH;
}

int strain_thread_install_reserved_alternate_stack(void *reserved) {
    const size_t page = strain_page_size();
    char *region = (char *)reserved - page;
    if (strain_thread_ready) {
        strain_altstack_give(region, page);
        return 0;
    }
    stack_t alternate;
    alternate.ss_sp = reserved;
    alternate.ss_size = STRAIN_ALTSTACK_SIZE;
    alternate.ss_flags = 0;
    if (sigaltstack(&alternate, NULL) != 0) {
        int error = errno;
        strain_altstack_give(region, page);
        return error;
    }
    strain_thread_altstack = region;
    strain_thread_ready = 1;
    return 0;
}

int strain_thread_prepare_alternate_stack(void) {
    if (strain_thread_ready) return 0;
    void *reserved = strain_thread_reserve_alternate_stack();
    if (reserved == NULL) return errno;
    return strain_thread_install_reserved_alternate_stack(reserved);
}

// The calling thread's stack bounds from pthread_getattr_np (which allocates).
static int strain_read_own_stack(strain_stack_bounds *out) {
    pthread_attr_t attributes;
    int status = pthread_getattr_np(pthread_self(), &attributes);
    if (status != 0) return status;
    void *stack_address = NULL;
    size_t stack_size = 0;
    size_t guard_size = 0;
    pthread_attr_getstack(&attributes, &stack_address, &stack_size);
    pthread_attr_getguardsize(&attributes, &guard_size);
    pthread_attr_destroy(&attributes);
    out->low = (uintptr_t)stack_address;
    out->high = (uintptr_t)stack_address + stack_size;
    out->guard_size = guard_size;
    return 0;
}

int strain_thread_prepare(void) {
    if (strain_thread_ready && strain_thread_bounds_known) return 0;
    if (!strain_thread_bounds_known) {
        int status = strain_read_own_stack(&strain_thread_stack);
        if (status != 0) return status;
        strain_thread_bounds_known = 1;
    }
    return strain_thread_prepare_alternate_stack();
}

void strain_thread_release(void) {
    if (!strain_thread_ready || strain_thread_altstack == NULL) return;
    // Off first, then unmapped: a signal in between finds no alternate stack
    // (and runs on the thread's own), never a freed one.
    stack_t off;
    memset(&off, 0, sizeof(off));
    off.ss_flags = SS_DISABLE;
    if (sigaltstack(&off, NULL) != 0) return;  // in use: this is a handler; keep it
    strain_altstack_give(strain_thread_altstack, strain_page_size());
    strain_thread_altstack = NULL;
    strain_thread_ready = 0;
    strain_thread_bounds_known = 0;
}

int strain_thread_bounds(strain_stack_bounds *out) {
    int status = strain_thread_prepare();
    if (status != 0) return status;
    *out = strain_thread_stack;
    return 0;
}

int strain_thread_report_size(size_t size) {
    int status = strain_thread_prepare();
    if (status != 0) return status;
    if (size == 0 || size > strain_thread_stack.high - strain_thread_stack.low) return EINVAL;
    strain_thread_stack.high = strain_thread_stack.low + size;
    return 0;
}

__attribute__((noinline)) void strain_stack_measure(strain_stack_place *out) {
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    strain_stack_bounds bounds = {0};
    if (strain_thread_bounds_known) bounds = strain_thread_stack;
    else (void)strain_read_own_stack(&bounds);  // writes only when it could read them
    uintptr_t low = bounds.low, high = bounds.high;
    // An armed trial thread's reported top is below its real one, and may be below here.
    int known = low != 0 && high > low;
    out->used = known && here < high ? (size_t)(high - here) : 0;
    out->room = known && here > low ? (size_t)(here - low) : 0;
    out->size = known ? (size_t)(high - low) : 0;
}

// strain_stack_note's figures: written and read by the one thread that notes, or read
// after the noting thread was waited for.
static strain_stack_place strain_noted;

__attribute__((noinline)) void strain_stack_note(void) {
    strain_stack_measure(&strain_noted);
    // Never a tail call: the measured frame is one call below the noting closure's, always.
    __asm__ volatile("" : : : "memory");
}

void strain_stack_noted(size_t *used, size_t *room, size_t *size) {
    if (used != NULL) *used = strain_noted.used;
    if (room != NULL) *room = strain_noted.room;
    if (size != NULL) *size = strain_noted.size;
}

__attribute__((noinline)) void strain_call_below(size_t bytes, void (*function)(void *), void *context) {
    bytes &= ~(size_t)15;
    if (bytes > 0) {
        void *set_aside = __builtin_alloca(bytes);
        // Kept, never written: its pages stay as untouched as the thread left them.
        __asm__ volatile("" : : "r"(set_aside) : "memory");
    }
    function(context);
    // Never a tail call: with or without bytes set aside, `function` runs below this frame.
    __asm__ volatile("" : : : "memory");
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

int strain_set_stack_profile(size_t thread_stack_bytes, size_t main_stack_bytes) {
    if (main_stack_bytes != 0) {
        struct rlimit limit;
        if (getrlimit(RLIMIT_STACK, &limit) != 0) return errno;
        const rlim_t before = limit.rlim_cur;
        limit.rlim_cur = main_stack_bytes;
        if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < main_stack_bytes) limit.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_STACK, &limit) != 0) return errno;
        // glibc sizes the main thread's stack by this limit: bounds known from
        // before (a trial server's, inherited by its copy) are asked for again.
        if (limit.rlim_cur != before) strain_thread_bounds_known = 0;
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
    char text[4096];
    if (strain_read_proc_text("/proc/self/status", text, sizeof(text)) <= 0) return -1;
    const char *line = strstr(text, "\nThreads:");
    if (line == NULL) return -1;
    return atoi(line + strlen("\nThreads:"));
}

#pragma clang attribute pop
