// The runner's and the child's ends of a trial's lifetime: how a runner hears
// SIGINT, SIGTERM and SIGQUIT, and how a child makes sure it never outlives its runner.
//
// The handlers here are async-signal-safe: they store to a sig_atomic_t or call
// kill(2), nothing else (no malloc, no locks, no stdio).
#include "strain_tools.h"
#include "strain_probe.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <spawn.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/syscall.h>

// The first stop signal the runner caught, 0 while none has.
static volatile sig_atomic_t strain_stop_signal = 0;

// Records the signal and nothing else: the runner's loop polls the flag every few
// milliseconds, kills the trial's process group and writes what it has.
static void strain_stop_handler(int signal_number) {
    if (strain_stop_signal == 0) strain_stop_signal = signal_number;
}

int strain_runner_catch_stop_signals(void) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = strain_stop_handler;
    // SA_RESETHAND: a second Ctrl-C ends the runner at once (its child still
    // dies with it, through the parent-death signal).
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGINT, &action, NULL) != 0) return errno;
    if (sigaction(SIGTERM, &action, NULL) != 0) return errno;
    // SIGQUIT (Ctrl-\) asks a program to quit: the runner stops as for SIGTERM.
    // Left to the Swift runtime, it printed a "Program crashed" backtrace and the
    // run went on.
    if (sigaction(SIGQUIT, &action, NULL) != 0) return errno;
    // A closed stdout (`strain run … | head -1`) makes writes fail with EPIPE
    // instead of killing the run before run.json is written.
    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &ignore, NULL) != 0) return errno;
    // Started with SIGCHLD ignored (it survives exec), the kernel would reap every
    // trial itself and the runner would wait for ends it can never see.
    if (strain_child_signal_take_back() < 0) return errno;
    // A launcher may have started us with them blocked (some process APIs do):
    // a blocked stop signal would stay pending and the run could not be stopped.
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGQUIT);
    return pthread_sigmask(SIG_UNBLOCK, &stops, NULL);
}

int strain_runner_stop_signal(void) { return strain_stop_signal; }

void strain_runner_request_stop(int signal_number) {
    if (strain_stop_signal == 0) strain_stop_signal = signal_number;
}

// Runs in the child when its runner dies: kills the child's whole process group,
// the child and every grandchild that stayed in it, with one kill(2).
static void strain_parent_death_handler(int signal_number) {
    (void)signal_number;
    kill(0, SIGKILL);
    _exit(137);
}

int strain_child_bind_to_parent(int expected_parent) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = strain_parent_death_handler;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(STRAIN_PARENT_DEATH_SIGNAL, &action, NULL) != 0) return errno;
    int status = prctl(PR_SET_PDEATHSIG, STRAIN_PARENT_DEATH_SIGNAL) == 0 ? 0 : errno;
    // The runner may have died between the spawn and here: then the child was
    // already re-parented and the death signal will never come. Checked whether or
    // not the request was granted: a counted child under Valgrind (which refuses it)
    // takes seconds to get here, and its runner may be gone by then.
    if (expected_parent > 0 && getppid() != expected_parent) {
        kill(0, SIGKILL);
        _exit(137);
    }
    return status;
}

// MARK: - Watchers that stand in for the parent-death signal under Valgrind

// The start time (clock ticks since boot: field 22 of /proc/PID/stat) of a live,
// non-zombie process `pid`; 0 when it is gone, a zombie, or unreadable. System calls
// only, no stdio or malloc: a watcher is a fork of a process that may hold locks.
static unsigned long long strain_process_start_time(int pid) {
    char path[32] = "/proc/";
    int at = 6;
    char digits[12];
    int count = 0;
    for (unsigned value = (unsigned)pid; count == 0 || value > 0; value /= 10) digits[count++] = (char)('0' + value % 10);
    while (count > 0) path[at++] = digits[--count];
    memcpy(path + at, "/stat", 6);
    int descriptor = (int)syscall(SYS_open, path, O_RDONLY | O_CLOEXEC, 0);
    if (descriptor < 0) return 0;
    char buffer[1024];
    long length = syscall(SYS_read, descriptor, buffer, sizeof(buffer) - 1);
    syscall(SYS_close, descriptor);
    if (length <= 0) return 0;
    buffer[length] = 0;
    // The command name is in parentheses and may hold anything: fields follow the last ')'.
    char *field = NULL;
    for (long index = length - 1; index >= 0; index--) {
        if (buffer[index] == ')') { field = buffer + index + 1; break; }
    }
    if (field == NULL) return 0;
    // Field 3 (state) is the first after ')'; field 22 (starttime) the twentieth.
    int number = 2;
    unsigned long long start = 0;
    for (char *cursor = field; *cursor != 0; cursor++) {
        if (*cursor == ' ') { number++; continue; }
        if (number == 3 && (*cursor == 'Z' || *cursor == 'X')) return 0;
        if (number == 22) {
            if (*cursor < '0' || *cursor > '9') break;
            start = start * 10 + (unsigned long long)(*cursor - '0');
        }
        if (number > 22) break;
    }
    return start;
}

// Waits until `parent` (started at `start`) is gone, a zombie, or its pid taken by
// another process; returns early, with 0, when `stay_while` (if nonzero) has ended.
// Polls once a second: Valgrind (the only place these watchers run) does not know
// pidfd_open, and its warning about it goes to the program's standard error, a pipe
// whose reader is the runner, so after the runner's death that warning's SIGPIPE
// killed the watcher and the trial it stood for ran on alone.
static int strain_wait_for_runner(int parent, unsigned long long start, int stay_while) {
    for (;;) {
        if (start == 0 || strain_process_start_time(parent) != start) return 1;
        if (stay_while > 0 && (kill(stay_while, 0) != 0 || getppid() != stay_while)) return 0;
        sleep(1);
    }
}

// A watcher writes nothing, but must not die of a write that Valgrind makes for it.
static void strain_watcher_ignore_pipe_signal(void) {
    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, NULL);
}

int strain_child_watch_parent_by_process(int parent) {
    // Read before the fork: a runner already gone kills the child here and now.
    unsigned long long start = strain_process_start_time(parent);
    if (start == 0) {
        kill(0, SIGKILL);
        _exit(137);
    }
    pid_t watcher = fork();
    if (watcher < 0) return errno;
    if (watcher > 0) return 0;
    // The watcher: system calls only (the child may hold locks the fork copied).
    // Every descriptor closed, so the runner's pipes see their end when the child's do.
    strain_watcher_ignore_pipe_signal();
    for (int fd = 0; fd < 4096; fd++) close(fd);
    strain_wait_for_runner(parent, start, 0);
    kill(0, SIGKILL);
    _exit(137);
}

// Removes the files of `folder` (flat: the counted trials' folder has no subfolders)
// and then the folder; 0 once it is gone.
static int strain_remove_flat_folder(const char *folder) {
    DIR *directory = opendir(folder);
    if (directory == NULL) return errno == ENOENT ? 0 : errno;
    struct dirent *entry;
    while ((entry = readdir(directory)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        unlinkat(dirfd(directory), entry->d_name, 0);
    }
    closedir(directory);
    if (rmdir(folder) == 0 || errno == ENOENT) return 0;
    return errno;
}

int strain_server_watch_runner(int parent, const char *folder) {
    const char *base = folder != NULL ? strrchr(folder, '/') : NULL;
    base = base != NULL ? base + 1 : folder;
    int removes = base != NULL && strncmp(base, "strain-callgrind-", 17) == 0;
    pid_t server = getpid();
    unsigned long long start = strain_process_start_time(parent);
    pid_t watcher = fork();
    if (watcher < 0) return errno;
    if (watcher > 0) return 0;
    // The watcher: a copy of a single-threaded server, so libc is safe to use here.
    strain_watcher_ignore_pipe_signal();
    for (int fd = 0; fd < 4096; fd++) close(fd);
    if (!strain_wait_for_runner(parent, start, server)) _exit(0);
    kill(server, SIGKILL);
    if (removes) {
        for (int attempt = 0; attempt < 50 && strain_remove_flat_folder(folder) != 0; attempt++) usleep(100000);
    }
    _exit(137);
}

// Makes the runner the subreaper of its descendants: a trial's grandchild that
// left the trial's process group (setsid) is re-parented to the runner when the
// trial's child ends, instead of to init, so the runner can find and kill it.
int strain_runner_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : errno;
}

// pipe2 is a GNU extension that Swift's Glibc module does not import.
int strain_pipe_cloexec(int ends[2]) {
    return pipe2(ends, O_CLOEXEC) == 0 ? 0 : errno;
}

// MARK: - `strain exec`: the wrapper between a caller and its program

#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static pid_t strain_forward_pid;
// Signals that came before the program's pid was known (one bit per signal number):
// the program gets them once it is known, rather than never.
static unsigned long strain_forward_pending;
// Every signal sent to `strain exec` that the program gets too (passed on, or a
// terminal's, which reaches it by itself): a stall verdict is taken back only when
// the program ran on with none of them.
static unsigned long strain_forward_seen;
static int strain_forward_last;

// Sends the kept signals to the program, once its pid is known. Async-signal-safe.
static void strain_forward_flush(void) {
    pid_t pid = __atomic_load_n(&strain_forward_pid, __ATOMIC_SEQ_CST);
    if (pid <= 0) return;
    unsigned long pending = __atomic_exchange_n(&strain_forward_pending, 0UL, __ATOMIC_SEQ_CST);
    for (int signal_number = 1; signal_number < 64; signal_number++) {
        if (pending & (1UL << signal_number)) kill(pid, signal_number);
    }
}

// A signal sent to strain's whole process group (`kill -INT -PGID`, `timeout -s INT`,
// which signals its child and then its group, a supervisor that signals every process
// of a group or a cgroup, the program's own `kill(0, …)`) reaches the program by
// itself, as a terminal's does, and passing it on too delivered it twice. Its siginfo
// is that of one sent to strain alone (SI_USER, the sender's pid), so a witness tells
// them apart: a child of strain's, in strain's process group, that does nothing but
// write the time each of these signals reaches it into memory it shares with strain.
// A signal that reached the witness within 50 ms of strain was sent to both, so to the
// group (or to every process): the program has it already.
#define STRAIN_WITNESS_SIGNALS 65
static uint64_t *strain_witness_stamps;
static pid_t strain_witness_pid;
static const int strain_forwarded_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};

static uint64_t strain_monotonic_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

static void strain_witness_handler(int signal_number) {
    if (signal_number > 0 && signal_number < STRAIN_WITNESS_SIGNALS) {
        __atomic_store_n(&strain_witness_stamps[signal_number], strain_monotonic_now(), __ATOMIC_SEQ_CST);
    }
}

int strain_exec_start_witness(void) {
    if (strain_witness_pid > 0) return 0;
    if (strain_witness_stamps == NULL) {
        void *shared = mmap(NULL, STRAIN_WITNESS_SIGNALS * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared == MAP_FAILED) return errno;
        strain_witness_stamps = shared;
    }
    pid_t parent = getpid();
    // Every signal blocked across the fork: the witness sets its handlers before any
    // group signal can find it at the default action (and end it).
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    pid_t pid = fork();
    if (pid == 0) {
        // Only async-signal-safe calls: strain has other threads.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        // Named, so `ps` and `strain dump` tell it from the program strain runs.
        prctl(PR_SET_NAME, STRAIN_WITNESS_NAME);
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_handler = strain_witness_handler;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < sizeof(strain_forwarded_signals) / sizeof(strain_forwarded_signals[0]); i++) {
            sigaction(strain_forwarded_signals[i], &action, NULL);
        }
        // None of strain's descriptors: a pipe's reader waits for its last writer.
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) { dup2(null, 0); dup2(null, 1); dup2(null, 2); }
        if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
            for (int fd = 3; fd < 4096; fd++) close(fd);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (;;) pause();
    }
    int status = pid < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (pid > 0) strain_witness_pid = pid;
    return status;
}

void strain_exec_stop_witness(void) {
    pid_t pid = strain_witness_pid;
    if (pid <= 0) return;
    strain_witness_pid = 0;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

int strain_exec_witness_pid(void) {
    return strain_witness_pid;
}

// Whether `signal_number` is pending for the witness (its `ShdPnd` or `SigPnd` in
// /proc/PID/status): sent to it, its handler not yet run. Async-signal-safe.
static int strain_witness_pending(int signal_number) {
    char path[64] = "/proc/";
    size_t used = strlen(path);
    char digits[12];
    int count = 0;
    for (unsigned value = (unsigned)strain_witness_pid; count == 0 || value > 0; value /= 10) digits[count++] = (char)('0' + value % 10);
    while (count > 0) path[used++] = digits[--count];
    memcpy(path + used, "/status", 8);
    char text[4096];
    if (signal_number < 1 || signal_number > 64 || strain_read_proc_text(path, text, sizeof(text)) <= 0) return 0;
    unsigned long long pending = strain_status_mask(text, "\nShdPnd:") | strain_status_mask(text, "\nSigPnd:");
    return (int)((pending >> (signal_number - 1)) & 1);
}

// Whether `signal_number`, which reached strain just now, reached the witness too.
// A group's signal is made pending for its processes one after another in one
// kill(2): the witness has it pending (not yet scheduled to run its handler, as on a
// loaded machine) or has stamped it; between the two, it is given 2.5 ms.
// Async-signal-safe.
static int strain_sent_to_group(int signal_number) {
    if (strain_witness_pid <= 0 || strain_witness_stamps == NULL || signal_number >= STRAIN_WITNESS_SIGNALS) return 0;
    uint64_t arrived = strain_monotonic_now();
    for (int attempt = 0; attempt < 5; attempt++) {
        uint64_t stamp = __atomic_load_n(&strain_witness_stamps[signal_number], __ATOMIC_SEQ_CST);
        if (stamp != 0 && stamp + 50000000ULL >= arrived) return 1;
        if (strain_witness_pending(signal_number)) return 1;
        struct timespec pause_time = {0, 500000};
        nanosleep(&pause_time, NULL);
    }
    return 0;
}

// Passes a signal sent to `strain exec` on to its program. A terminal's Ctrl-C or
// Ctrl-\ (si_code SI_KERNEL) reaches the program by itself, since it is in the
// same foreground process group, and so does a signal sent to that whole group
// (see the witness above): forwarding either too would deliver it twice.
static void strain_forward_handler(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    __atomic_fetch_add(&strain_forward_seen, 1UL, __ATOMIC_SEQ_CST);
    __atomic_store_n(&strain_forward_last, signal_number, __ATOMIC_SEQ_CST);
    if (info->si_code == SI_KERNEL) return;
    int saved = errno;
    if (strain_sent_to_group(signal_number)) {
        errno = saved;
        return;
    }
    pid_t pid = __atomic_load_n(&strain_forward_pid, __ATOMIC_SEQ_CST);
    if (pid > 0) {
        kill(pid, signal_number);
    } else {
        // Between the spawn and the pid's arrival here: keep it, and flush in case
        // the pid arrived meanwhile (the flush there may have run before this bit).
        __atomic_fetch_or(&strain_forward_pending, 1UL << signal_number, __ATOMIC_SEQ_CST);
        strain_forward_flush();
    }
    errno = saved;
}

// The signals strain was started with ignored, read before its main ignores SIGPIPE:
// `nohup`'s SIGHUP, a script's background job's SIGINT and SIGQUIT, `trap '' PIPE
// TERM`. strain exec leaves them ignored for its program, which inherits them so, as
// it would without strain (it had them at their default, and `nohup strain exec --
// daemon` died of the SIGHUP nohup was there to ignore: re-trial 33d).
static sigset_t strain_started_ignoring;

// Only the signals asked about: those passed on, and SIGPIPE (every strain process runs
// this constructor, each spawned trial included).
static void strain_note_if_ignored(int signal_number) {
    struct sigaction current;
    if (sigaction(signal_number, NULL, &current) == 0 && !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) {
        sigaddset(&strain_started_ignoring, signal_number);
    }
}

__attribute__((constructor)) static void strain_note_started_ignoring(void) {
    sigemptyset(&strain_started_ignoring);
    for (size_t i = 0; i < sizeof(strain_forwarded_signals) / sizeof(strain_forwarded_signals[0]); i++) strain_note_if_ignored(strain_forwarded_signals[i]);
    strain_note_if_ignored(SIGPIPE);
}

// glibc keeps signals 32 and 33 for itself (thread cancellation, setxid across threads),
// and its posix_spawn sets them to SIG_IGN in every child unless they are in the child's
// default set, an ignore that survives the exec: a program strain started from a shell
// had them ignored where it would not have. sigaction refuses them, so the system call
// reads them, and strain_default_internal_signals writes their bits into the set.
struct strain_kernel_sigaction {
    void *handler;
    unsigned long words[4];
};
static int strain_started_ignoring_internal[2];

__attribute__((constructor)) static void strain_note_internal_ignored(void) {
    for (int i = 0; i < 2; i++) {
        struct strain_kernel_sigaction current;
        memset(&current, 0, sizeof(current));
        if (syscall(SYS_rt_sigaction, __SIGRTMIN + i, NULL, &current, sizeof(unsigned long)) == 0) {
            strain_started_ignoring_internal[i] = current.handler == (void *)SIG_IGN;
        }
    }
}

void strain_default_internal_signals(sigset_t *set) {
    const size_t width = 8 * sizeof(unsigned long);
    for (int i = 0; i < 2; i++) {
        if (strain_started_ignoring_internal[i]) continue;
        int bit = __SIGRTMIN + i - 1;
        ((unsigned long *)set)[bit / width] |= 1UL << (bit % width);
    }
}

int strain_started_ignoring_signal(int signal_number) {
    return sigismember(&strain_started_ignoring, signal_number) == 1;
}

int strain_exec_forward_signals(int pid) {
    __atomic_store_n(&strain_forward_pid, pid, __ATOMIC_SEQ_CST);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = strain_forward_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigset_t blocked;
    sigemptyset(&blocked);
    for (size_t i = 0; i < sizeof(strain_forwarded_signals) / sizeof(strain_forwarded_signals[0]); i++) {
        // Ignored when strain started: ignored still, by strain and by the program.
        if (strain_started_ignoring_signal(strain_forwarded_signals[i])) continue;
        if (sigaction(strain_forwarded_signals[i], &action, NULL) != 0) return errno;
        sigaddset(&blocked, strain_forwarded_signals[i]);
    }
    // A launcher may have started strain with them blocked (some process APIs do,
    // and the mask survives exec): they would stay pending here, never passed on.
    int status = pthread_sigmask(SIG_UNBLOCK, &blocked, NULL);
    strain_forward_flush();
    return status;
}

unsigned long strain_exec_signals_seen(void) {
    return __atomic_load_n(&strain_forward_seen, __ATOMIC_SEQ_CST);
}

int strain_exec_last_signal(void) {
    return __atomic_load_n(&strain_forward_last, __ATOMIC_SEQ_CST);
}

int strain_child_signal_take_back(void) {
    struct sigaction current;
    if (sigaction(SIGCHLD, NULL, &current) != 0) return -1;
    if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_IGN) return 0;
    struct sigaction standard;
    memset(&standard, 0, sizeof(standard));
    standard.sa_handler = SIG_DFL;
    sigemptyset(&standard.sa_mask);
    return sigaction(SIGCHLD, &standard, NULL) == 0 ? 1 : -1;
}

int strain_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int strain_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -errno : (int)fd;
#else
    (void)pid;
    return -ENOSYS;
#endif
}

void strain_exit_like_signal(int signal_number) {
    // The program's core (if any) is the one that matters: not another of strain.
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(signal_number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &only, NULL);
    raise(signal_number);
    _exit(128 + signal_number);
}

int strain_sigqueue(int pid, int signal_number, int value) {
    union sigval carried;
    memset(&carried, 0, sizeof(carried));
    carried.sival_int = value;
    return sigqueue(pid, signal_number, carried) == 0 ? 0 : errno;
}

#pragma clang attribute pop
