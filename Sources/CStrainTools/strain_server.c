// The trial server's C: copying an already loaded process into a trial that is
// the runner's child, and passing descriptors over the server's socket.
//
// Why C: clone(2) with CLONE_PARENT has no wrapper that returns in the copy (glibc's
// clone() wants a new stack and a function), and SCM_RIGHTS needs the CMSG_*
// macros, which Swift does not import.
#include "strain_server.h"
#include "strain_probe.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

// Offset of `tid` in glibc's struct pthread, -1 until strain_server_prepare found it.
static long strain_tid_offset = -1;

int strain_server_prepare(void) {
    // glibc describes its thread descriptor for libthread_db: {bits, count, offset}.
    const uint32_t *description = dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid");
    if (description == NULL || description[0] != 8 * sizeof(pid_t) || description[1] != 1) return ENOSYS;
    const long offset = (long)description[2];
    const pid_t *field = (const pid_t *)((const char *)pthread_self() + offset);
    if (*field != (pid_t)syscall(SYS_gettid)) return ENOSYS;
    strain_tid_offset = offset;
    return 0;
}

// Whether the 8-byte word holding `slot` (4 bytes inside a TLS block of `size` bytes
// at `block`, aligned to `alignment`) may be a pointer into a mapping: then `slot` is
// half of it, not a thread id of its own.
static int strain_tls_slot_in_pointer(const char *block, size_t size, size_t alignment, const int32_t *slot) {
    if (alignment < 8) return 0;  // no pointer in the block is 8-byte aligned
    size_t offset = (size_t)((const char *)slot - block) & ~(size_t)7;
    if (offset + 8 > size) return 0;
    uint64_t word;
    memcpy(&word, block + offset, sizeof(word));
    long page = sysconf(_SC_PAGESIZE);
    unsigned char resident;
    // mincore fails with ENOMEM where nothing is mapped.
    return word >= (uint64_t)page && mincore((void *)(uintptr_t)(word & ~(uint64_t)(page - 1)), 1, &resident) == 0;
}

typedef struct {
    int32_t stale;
    int32_t current;
} strain_tid_renewal;

static int strain_renew_module_tid_caches(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const strain_tid_renewal *renewal = data;
    char *block = info->dlpi_tls_data;
    if (block == NULL) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_TLS) continue;
        for (size_t offset = 0; offset + sizeof(int32_t) <= header->p_memsz; offset += sizeof(int32_t)) {
            int32_t *slot = (int32_t *)(void *)(block + offset);
            if (*slot != renewal->stale || strain_tls_slot_in_pointer(block, header->p_memsz, header->p_align, slot)) continue;
            *slot = renewal->current;
        }
    }
    return 0;
}

void strain_server_renew_tid_caches(pid_t stale) {
    strain_tid_renewal renewal = {stale, (int32_t)syscall(SYS_gettid)};
    if (renewal.stale <= 0 || renewal.stale == renewal.current) return;
    dl_iterate_phdr(strain_renew_module_tid_caches, &renewal);
}

pid_t strain_server_fork_trial(void) {
    if (strain_tid_offset < 0) return -ENOSYS;
    pid_t *tid = (pid_t *)((char *)pthread_self() + strain_tid_offset);
    const pid_t server = *tid;
    // The exit signal is the server's own (SIGCHLD): CLONE_PARENT takes it from
    // the caller, whatever the flags say. The raw call's argument order differs
    // by architecture; the new stack is 0 (the copy's own, as fork) and tls unused.
    const unsigned long flags = (unsigned long)(CLONE_PARENT | CLONE_CHILD_SETTID | SIGCHLD);
#if defined(__x86_64__)
    // flags, stack, parent tid, child tid, tls (tested here).
    long pid = syscall(SYS_clone, flags, NULL, NULL, tid, NULL);
#elif defined(__aarch64__)
    // CLONE_BACKWARDS: flags, stack, parent tid, tls, child tid (written to the
    // kernel's order, never run: Strain is tested on x86-64 only).
    long pid = syscall(SYS_clone, flags, NULL, NULL, NULL, tid);
#else
#error "strain_server_fork_trial: name this architecture's raw clone argument order"
#endif
    if (pid < 0) return -errno;
    if (pid == 0) strain_server_renew_tid_caches(server);
    return (pid_t)pid;
}

// The signals a trial always starts with at their default action.
static const int strain_server_default_signals[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP, SIGSYS, SIGCHLD};

// The signals a copy puts back to their default action (see
// strain_server_note_signals): the copy resets only these.
static sigset_t strain_server_changed_signals;
static int strain_server_signals_noted;

int strain_server_note_signals(void) {
    sigemptyset(&strain_server_changed_signals);
    for (int signal_number = 1; signal_number <= SIGRTMAX; signal_number++) {
        if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
        struct sigaction current;
        if (sigaction(signal_number, NULL, &current) != 0) continue;
        int handled = (current.sa_flags & SA_SIGINFO) || (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
        // An ignored signal stays ignored, as it does through a spawn's exec, but for
        // the ones a trial always gets back at their default.
        int reset_if_ignored = signal_number >= SIGRTMIN;
        for (size_t i = 0; i < sizeof(strain_server_default_signals) / sizeof(strain_server_default_signals[0]); i++) {
            if (strain_server_default_signals[i] == signal_number) reset_if_ignored = 1;
        }
        if (handled || (current.sa_handler == SIG_IGN && reset_if_ignored)) sigaddset(&strain_server_changed_signals, signal_number);
    }
    strain_server_signals_noted = 1;
    return 0;
}

int strain_server_child_setup(int output, int error, int result, int shared) {
    // Above every target first, so no dup2 below overwrites a source still needed.
    int sources[4] = {output, error, result, shared};
    int moved[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        if (sources[i] < 0) continue;
        moved[i] = fcntl(sources[i], F_DUPFD, 64);
        if (moved[i] < 0) return errno;
    }
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0) return errno;
    if (dup2(null, 0) < 0) return errno;
    for (int i = 0; i < 4; i++) {
        if (moved[i] >= 0 && dup2(moved[i], i + 1) < 0) return errno;
    }
    // Everything else the server had (its socket, the received originals) goes.
    if (syscall(SYS_close_range, shared >= 0 ? 5u : 4u, ~0u, 0u) != 0) return errno;
    // libunwind's pipe, closed with the rest: the copy's own, where libunwind looks.
    int renewed = strain_probe_renew_unwinder_pipe();
    if (renewed != 0) return renewed;

    // As posix_spawn gives a trial: nothing blocked, the default action for the
    // signals the server (or the runner before it) may have changed.
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    if (strain_server_signals_noted) {
        // Only what the server had changed (about 45 calls fewer than resetting every one).
        for (int signal_number = 1; signal_number <= SIGRTMAX; signal_number++) {
            if (sigismember(&strain_server_changed_signals, signal_number) == 1) sigaction(signal_number, &action, NULL);
        }
    } else {
        for (size_t i = 0; i < sizeof(strain_server_default_signals) / sizeof(strain_server_default_signals[0]); i++) {
            sigaction(strain_server_default_signals[i], &action, NULL);
        }
        for (int signal_number = SIGRTMIN; signal_number <= SIGRTMAX; signal_number++) sigaction(signal_number, &action, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) return errno;

    // Its own process group, so a deadline ends it and all it started (the runner
    // sets the same group from its side: whichever comes first wins the race).
    if (setpgid(0, 0) != 0) return errno;
    return 0;
}

enum { strain_server_max_fds = 8 };

int strain_server_send(int socket, const void *bytes, size_t length, const int *fds, size_t count) {
    if (count > strain_server_max_fds) return EINVAL;
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        char bytes[CMSG_SPACE(sizeof(int) * strain_server_max_fds)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    if (count > 0) {
        message.msg_control = control.bytes;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
    }
    for (;;) {
        ssize_t sent = sendmsg(socket, &message, MSG_NOSIGNAL);
        if (sent >= 0) return (size_t)sent == length ? 0 : EMSGSIZE;
        if (errno != EINTR) return errno;
    }
}

long strain_server_receive(int socket, void *buffer, size_t capacity, int *fds, size_t *count) {
    struct iovec vector = {.iov_base = buffer, .iov_len = capacity};
    union {
        char bytes[CMSG_SPACE(sizeof(int) * strain_server_max_fds)];
        struct cmsghdr align;
    } control;
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof(control.bytes);
    ssize_t length;
    do {
        length = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (length < 0 && errno == EINTR);
    if (length < 0) return -errno;
    size_t room = *count;
    size_t received = 0;
    int lost = 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const int *incoming = (const int *)CMSG_DATA(header);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, incoming + i, sizeof(int));
            if (received < room) fds[received++] = fd; else { close(fd); lost = 1; }
        }
    }
    *count = received;
    if (lost || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        for (size_t i = 0; i < received; i++) close(fds[i]);
        *count = 0;
        return -EMSGSIZE;
    }
    return (long)length;
}

int strain_server_socket_pair(int ends[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) == 0 ? 0 : errno;
}

#pragma clang attribute pop
