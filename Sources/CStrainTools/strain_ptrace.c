// Out-of-process stack walk of one thread with ptrace + libunwind-ptrace.
//
// Build: cc -std=c11 -D_GNU_SOURCE -c strain_ptrace.c
// Link:  ... strain_ptrace.o -lunwind-ptrace -lunwind-generic -llzma
//   Debian's libunwind-ptrace.so records no DT_NEEDED at all although it uses _Ux86_64_*
//   (from libunwind-generic, a symlink to libunwind-x86_64) and lzma_*. GNU ld finds lzma
//   through libunwind-generic's own DT_NEEDED, but gold and lld (and so swiftc) insist on
//   -llzma. -lunwind is never needed. On glibc < 2.34 add -pthread.
//
// Design notes:
// - attach/wait/walk/detach run on a short-lived helper thread. ptrace binds a tracee to
//   the tracing *thread*, and PTRACE_DETACH only works on a stopped tracee: if the stop never
//   comes (uninterruptible sleep), only the exit of the tracing thread can undo the attach,
//   and the kernel does that cleanly, dropping the pending interrupt. The helper also lets
//   the caller give up on a walk that blocks in the kernel (reading /proc/<pid>/maps or the
//   target's memory waits for its mmap lock, which a wedged process may hold).
// - PTRACE_SEIZE + PTRACE_INTERRUPT, not PTRACE_ATTACH: no SIGSTOP is queued, so no group
//   stop hits the other threads and nothing is left pending after detach; and it does not
//   depend on the thread accepting signals, so it reaches threads that block all of them.
// - Exit reports are only peeked at (WNOWAIT), never consumed: for the thread-group leader
//   of our own child that would steal the exit status from the caller's waitpid().

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // process_vm_readv, __WALL, PTRACE_SEIZE
#endif

#include "strain_tools.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libunwind-ptrace.h>
#include <libunwind.h>

#ifdef UNW_LOCAL_ONLY
#error "strain_ptrace.c needs the remote libunwind API; do not define UNW_LOCAL_ONLY"
#endif

enum {
    STOP_TIMEOUT_MS = 500,   // how long to wait for the interrupt stop
    CALL_TIMEOUT_MS = 2000,  // hard bound on one call, walk included
    CACHE_REUSE_MS = 1000,   // unwind-info cache kept across calls this close together
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// /proc/<tid>/status gives the same state letter as /proc/<tid>/stat (both come from
// get_task_state()) plus the Tgid that keys the unwind cache, in one read.
// Returns 0 or -errno (-ENOENT: no such thread).
static int read_status(int tid, char *state, int *tgid)
{
    char path[40], buf[1024];
    *state = '?';
    *tgid = 0;
    snprintf(path, sizeof path, "/proc/%d/status", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n <= 0)
        return n < 0 ? -e : -EIO;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nState:\t");
    if (p)
        *state = p[8];
    p = strstr(buf, "\nTgid:\t");
    if (p)
        *tgid = atoi(p + 7);
    return 0;
}

// PTRACE_SEIZE also fails with EPERM on a thread that is already exiting.
static int looks_gone(int tid)
{
    char st;
    int tgid;
    return read_status(tid, &st, &tgid) == -ENOENT || st == 'Z' || st == 'X';
}

// ---------------------------------------------------------------- remote memory

// libunwind-ptrace reads the target's .eh_frame_hdr and FDEs one word per PTRACE_PEEKDATA,
// byte by byte: ~100 syscalls per frame. A small per-walk block cache filled with
// process_vm_readv cuts that to a handful. It only holds the stopped thread's stack and
// read-only unwind tables, and is dropped after each walk.
enum { BLOCK = 4096, NBLOCKS = 16 };

struct memcache {
    pid_t tid;
    int disabled; // process_vm_readv refused (seccomp, ...): plain ptrace only
    unsigned next;
    uintptr_t base[NBLOCKS]; // 0 = empty
    unsigned char data[NBLOCKS][BLOCK];
};

// Accessors only receive libunwind-ptrace's own opaque argument, so the cache of the walk
// running on this (helper) thread is reached through TLS.
static _Thread_local struct memcache *tls_cache;

static const unsigned char *cache_block(struct memcache *mc, uintptr_t base)
{
    for (unsigned i = 0; i < NBLOCKS; i++)
        if (mc->base[i] == base)
            return mc->data[i];
    unsigned slot = mc->next++ % NBLOCKS;
    struct iovec local = {mc->data[slot], BLOCK}, remote = {(void *)base, BLOCK};
    mc->base[slot] = 0;
    if (process_vm_readv(mc->tid, &local, 1, &remote, 1, 0) != BLOCK) {
        if (errno == ENOSYS || errno == EPERM)
            mc->disabled = 1;
        return NULL; // e.g. unmapped: let ptrace produce the error
    }
    mc->base[slot] = base;
    return mc->data[slot];
}

static int cached_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                             void *arg)
{
    struct memcache *mc = tls_cache;
    uintptr_t base = (uintptr_t)addr & ~(uintptr_t)(BLOCK - 1);
    if (mc && !write && !mc->disabled && base != 0 && addr - base + sizeof *val <= BLOCK) {
        const unsigned char *b = cache_block(mc, base);
        if (b) {
            memcpy(val, b + (addr - base), sizeof *val);
            return 0;
        }
    }
    return _UPT_access_mem(as, addr, val, write, arg);
}

// ---------------------------------------------------------------- unwinding

// Remote address spaces default to UNW_CACHE_NONE, so every frame re-reads
// /proc/<pid>/maps and maps the ELF file. One shared space with UNW_CACHE_GLOBAL lets the
// threads of one dump share that work (~5x faster after the first thread). The cache is
// keyed by IP only, so it is flushed whenever the target process changes or the previous
// call is older than CACHE_REUSE_MS (bounding the exposure to dlclose/exec in the target).
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static unw_addr_space_t shared_as;
static int shared_tgid;
static int64_t shared_used_ns;

static unw_accessors_t accessors(void)
{
    unw_accessors_t acc = _UPT_accessors; // unw_create_addr_space keeps its own copy
    acc.access_mem = cached_access_mem;
    return acc;
}

// The shared space if free, else (concurrent caller, or a helper stuck in the kernel while
// holding it) a private one. *shared tells which to release.
static unw_addr_space_t acquire_as(int tgid, int *shared)
{
    unw_accessors_t acc = accessors();
    *shared = 0;
    if (tgid > 0 && pthread_mutex_trylock(&shared_lock) == 0) {
        if (!shared_as && (shared_as = unw_create_addr_space(&acc, 0)))
            unw_set_caching_policy(shared_as, UNW_CACHE_GLOBAL);
        if (shared_as) {
            int64_t now = now_ns();
            if (tgid != shared_tgid || now - shared_used_ns > (int64_t)CACHE_REUSE_MS * 1000000)
                unw_flush_cache(shared_as, 0, 0);
            shared_tgid = tgid;
            shared_used_ns = now;
            *shared = 1;
            return shared_as;
        }
        pthread_mutex_unlock(&shared_lock);
    }
    return unw_create_addr_space(&acc, 0);
}

static void release_as(unw_addr_space_t as, int shared)
{
    if (shared)
        pthread_mutex_unlock(&shared_lock);
    else if (as)
        unw_destroy_addr_space(as);
}

static long walk(int tid, int tgid, uintptr_t *ips, size_t max)
{
    int shared;
    unw_addr_space_t as = acquire_as(tgid, &shared);
    void *upt = as ? _UPT_create(tid) : NULL;
    struct memcache *mc = calloc(1, sizeof *mc); // optional: without it just slower
    if (mc)
        mc->tid = tid;
    tls_cache = mc;
    long n = -ENOMEM;
    if (upt) {
        unw_cursor_t cur;
        n = unw_init_remote(&cur, as, upt) < 0 ? -EIO : 0;
        while (n >= 0 && (size_t)n < max) {
            unw_word_t ip;
            if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
                break;
            ips[n++] = (uintptr_t)ip;
            if (unw_step(&cur) <= 0)
                break;
        }
        _UPT_destroy(upt);
    }
    tls_cache = NULL;
    free(mc);
    release_as(as, shared);
    return n;
}

// ---------------------------------------------------------------- ptrace

// Only a stopped tracee passes the kernel's check for ptrace requests (EINVAL = stopped,
// but no siginfo).
static int is_stopped(int tid)
{
    siginfo_t si;
    return ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 || errno == EINVAL;
}

static int wait_for_stop(int tid)
{
    const int64_t deadline = now_ns() + (int64_t)STOP_TIMEOUT_MS * 1000000;
    long pause_ns = 20000;
    for (int spins = 0;; spins++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, tid, &si, WSTOPPED | WEXITED | __WALL | WNOHANG | WNOWAIT) == 0) {
            if (si.si_pid == tid) {
                if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
                    return -ESRCH; // exited or killed: leave the report to its reaper
                // Consume the stop report, and only that (no WEXITED).
                (void)waitid(P_PID, tid, &si, WSTOPPED | __WALL | WNOHANG);
                return 0;
            }
        } else if (errno == ECHILD) {
            return -ESRCH; // gone and already reaped
        } else if (errno != EINTR) {
            return -errno;
        }
        // Another waiter in this process (say waitpid(-1) in a SIGCHLD handler) may have
        // eaten a leader's stop report; the tracee is stopped all the same.
        if (is_stopped(tid))
            return 0;
        int64_t left = deadline - now_ns();
        if (left <= 0)
            return -ETIMEDOUT;
        // The stop normally lands within microseconds: yield first, then back off.
        if (spins < 16) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, pause_ns < left ? pause_ns : (long)left};
        nanosleep(&ts, NULL);
        if (pause_ns < 2000000)
            pause_ns *= 2;
    }
}

// The signal to hand back on detach: none for event stops (our interrupt, or a group stop,
// which the kernel re-establishes on detach), the intercepted one for a signal-delivery stop.
static int signal_to_reinject(int tid)
{
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) != 0)
        return 0;
    return (si.si_code >> 8) == PTRACE_EVENT_STOP ? 0 : si.si_signo;
}

static long attach_walk_detach(int tid, int tgid, uintptr_t *ips, size_t max)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
        return errno == EPERM && looks_gone(tid) ? -ESRCH : -errno;
    // On the error returns below the tracee stays attached until this helper thread exits,
    // which detaches it (see top); PTRACE_DETACH itself fails on a tracee that is not stopped.
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
        return -errno;
    long r = wait_for_stop(tid);
    if (r < 0)
        return r;
    r = walk(tid, tgid, ips, max);
    if (r <= 0 && !is_stopped(tid))
        return -ESRCH; // SIGKILLed while we walked (which wakes a stopped tracee)
    int sig = signal_to_reinject(tid);
    (void)ptrace(PTRACE_DETACH, tid, 0, (void *)(intptr_t)sig);
    return r;
}

// ---------------------------------------------------------------- helper thread

// The caller waits on a condition variable rather than joining: it can give up on a stuck
// helper (which then finishes on its own), and the helper runs detached. (A timed join,
// pthread_clockjoin_np, is not understood by ThreadSanitizer, which then reports races.)
struct job {
    pthread_mutex_t mu;
    pthread_cond_t cv; // CLOCK_MONOTONIC
    int done, refs;    // under mu; refs: caller + helper, the last one out frees
    int tid, tgid;
    long result;
    size_t max;
    uintptr_t ips[];
};

// Returns with j->mu unlocked; frees j when this was the last reference.
static void job_release_locked(struct job *j)
{
    int last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (last) {
        pthread_cond_destroy(&j->cv);
        pthread_mutex_destroy(&j->mu);
        free(j);
    }
}

static void *helper_main(void *arg)
{
    struct job *j = arg;
    long r = attach_walk_detach(j->tid, j->tgid, j->ips, j->max);
    pthread_mutex_lock(&j->mu);
    j->result = r;
    j->done = 1;
    pthread_cond_signal(&j->cv);
    job_release_locked(j);
    return NULL; // thread exit also detaches a tracee left attached on an error path
}

static struct job *job_new(int tid, int tgid, size_t max)
{
    if (max > (SIZE_MAX - sizeof(struct job)) / sizeof(uintptr_t))
        return NULL;
    struct job *j = malloc(sizeof *j + max * sizeof(uintptr_t));
    if (!j)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&j->mu, NULL);
    j->done = 0;
    j->refs = 2;
    j->tid = tid;
    j->tgid = tgid;
    j->result = -EIO;
    j->max = max;
    return j;
}

long strain_ptrace_unwind(int tid, uintptr_t *ips, size_t max_frames, char *state)
{
    char st = '?';
    int tgid = 0;
    if (tid > 0)
        (void)read_status(tid, &st, &tgid); // failure is not fatal: PTRACE_SEIZE decides
    if (state)
        *state = st;
    if (tid <= 0 || (max_frames > 0 && ips == NULL))
        return -EINVAL;
    if (max_frames == 0)
        return 0;
    struct job *j = job_new(tid, tgid, max_frames);
    if (!j)
        return -ENOMEM;

    // The helper blocks every signal: host handlers never run on it, and its syscalls are
    // never interrupted.
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t th;
    int e = pthread_create(&th, &attr, helper_main, j);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (e != 0) {
        pthread_mutex_lock(&j->mu);
        j->refs = 1;
        job_release_locked(j);
        return -e;
    }

    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += CALL_TIMEOUT_MS / 1000;
    dl.tv_nsec += (long)(CALL_TIMEOUT_MS % 1000) * 1000000;
    if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&j->mu);
    while (!j->done && pthread_cond_timedwait(&j->cv, &j->mu, &dl) != ETIMEDOUT)
        ;
    // Not done: the helper is stuck in the kernel on the target's account (e.g. its mmap
    // lock); it finishes, detaches and frees j on its own once the target moves or dies.
    long r = j->done ? j->result : -ETIMEDOUT;
    if (r > 0)
        memcpy(ips, j->ips, (size_t)r * sizeof(uintptr_t));
    job_release_locked(j);
    return r;
}

#pragma clang attribute pop
