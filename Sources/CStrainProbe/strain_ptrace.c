// Out-of-process stack walk of one thread with ptrace + libunwind-ptrace.
//
// Build: cc -std=c11 -D_GNU_SOURCE -c strain_ptrace.c
// Link:  ... -lunwind-ptrace -lunwind-generic
//        (Debian's libunwind-ptrace.so records no DT_NEEDED for the _Ux86_64_* and lzma_*
//        symbols it uses; libunwind-generic (= libunwind-x86_64) provides the former and
//        pulls in liblzma itself. Add -llzma only for static or --no-copy-dt-needed setups
//        that complain.)
//
// Design notes:
// - The whole attach/wait/walk/detach runs on a short-lived helper thread. ptrace binds a
//   tracee to the tracing *thread*, and PTRACE_DETACH only works on a stopped tracee; if the
//   stop never comes (uninterruptible sleep), nothing can detach it except the exit of the
//   tracing thread, which the kernel turns into a clean detach that also drops the pending
//   interrupt. The helper also lets the caller give up on a walk that blocks inside the
//   kernel (e.g. /proc/<pid>/maps or PEEKDATA waiting on a wedged process's mmap lock).
// - PTRACE_SEIZE + PTRACE_INTERRUPT rather than PTRACE_ATTACH: no SIGSTOP is queued, so no
//   group stop hits the other threads and nothing is left pending after detach. It does not
//   need the thread to accept signals, so it reaches threads that block all of them.
// - Exit reports are only peeked (WNOWAIT), never consumed: for a thread-group leader of
//   our own child that would steal the exit status from the caller's waitpid().

#include "strain_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
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
    STOP_TIMEOUT_MS = 500,  // how long to wait for the interrupt stop
    CALL_TIMEOUT_MS = 2000, // hard bound on one call, walk included
};

struct job {
    atomic_int refs; // caller + helper; the last one out frees
    int tid;
    long result;
    size_t max;
    uintptr_t ips[];
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char read_state(int tid)
{
    char path[40], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return '?';
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return '?';
    buf[n] = '\0';
    // comm may itself contain ") ", so anchor on the last ')'.
    const char *p = strrchr(buf, ')');
    return (p && p[1] == ' ' && p[2]) ? p[2] : '?';
}

// True once `tid` sits in a ptrace stop: only then do ptrace requests pass the kernel's
// stopped-tracee check (EINVAL = stopped but no siginfo).
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
                    return -ESRCH; // exited/killed: leave the report to its reaper
                // Consume the stop report only (no WEXITED: see the leader note on top).
                (void)waitid(P_PID, tid, &si, WSTOPPED | __WALL | WNOHANG);
                return 0;
            }
        } else if (errno == ECHILD) {
            return -ESRCH; // already reaped by someone else
        } else if (errno != EINTR) {
            return -errno;
        }
        // Another waiter in this process (say waitpid(-1) in a SIGCHLD handler) may have
        // eaten the stop report of a leader; the tracee is stopped all the same.
        if (is_stopped(tid))
            return 0;
        int64_t left = deadline - now_ns();
        if (left <= 0)
            return -ETIMEDOUT;
        // The stop normally lands within microseconds; yield first, then back off.
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

// libunwind-ptrace reads the target's .eh_frame_hdr and FDEs one word per PTRACE_PEEKDATA,
// byte by byte: ~100 syscalls per frame. A small per-walk block cache in front of it, filled
// with process_vm_readv, cuts that to a few. Only valid while the tracee is stopped (its
// stack) or for read-only data (unwind tables), hence dropped after each walk.
enum { BLOCK = 4096, NBLOCKS = 16 };

struct memcache {
    pid_t tid;
    int disabled; // process_vm_readv refused (seccomp, ...): plain ptrace only
    unsigned next;
    uintptr_t base[NBLOCKS]; // 0 = empty
    unsigned char data[NBLOCKS][BLOCK];
};

// Accessors only get libunwind-ptrace's own opaque argument, so the cache of the walk in
// progress on this (helper) thread is reached through TLS.
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
        return NULL; // unmapped (EFAULT) etc.: let ptrace report it
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

static long walk(int tid, uintptr_t *ips, size_t max)
{
    // A fresh address space per call: libunwind caches unwind info by IP, and IPs mean
    // different things in another process or after a dlclose, so reuse needs care that a
    // per-call cost of a few microseconds does not justify.
    unw_accessors_t acc = _UPT_accessors; // copied by unw_create_addr_space
    acc.access_mem = cached_access_mem;
    unw_addr_space_t as = unw_create_addr_space(&acc, 0);
    void *upt = as ? _UPT_create(tid) : NULL;
    struct memcache *mc = calloc(1, sizeof *mc); // optional: NULL just means slow
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
    if (as)
        unw_destroy_addr_space(as);
    return n;
}

// The signal to hand back on detach: none for event stops (our interrupt, or a group stop
// the kernel re-establishes on detach), the intercepted signal for a signal-delivery stop.
static int signal_to_reinject(int tid)
{
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) != 0)
        return 0;
    return (si.si_code >> 8) == PTRACE_EVENT_STOP ? 0 : si.si_signo;
}

static long attach_walk_detach(int tid, uintptr_t *ips, size_t max)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
        return -errno;
    // On the error paths below the tracee stays attached until this helper thread exits,
    // which detaches it (see top); PTRACE_DETACH would fail on a non-stopped tracee.
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
        return -errno;
    long r = wait_for_stop(tid);
    if (r < 0)
        return r;
    r = walk(tid, ips, max);
    int sig = signal_to_reinject(tid);
    (void)ptrace(PTRACE_DETACH, tid, 0, (void *)(intptr_t)sig);
    return r;
}

static void job_release(struct job *j)
{
    if (atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) == 1)
        free(j);
}

static void *helper_main(void *arg)
{
    struct job *j = arg;
    j->result = attach_walk_detach(j->tid, j->ips, j->max);
    job_release(j);
    return NULL;
}

long strain_ptrace_unwind(int tid, uintptr_t *ips, size_t max_frames, char *state)
{
    if (state)
        *state = read_state(tid);
    if (tid <= 0 || (max_frames > 0 && ips == NULL))
        return -EINVAL;
    if (max_frames == 0)
        return 0;
    if (max_frames > (SIZE_MAX - sizeof(struct job)) / sizeof(uintptr_t))
        return -ENOMEM;

    struct job *j = malloc(sizeof *j + max_frames * sizeof(uintptr_t));
    if (!j)
        return -ENOMEM;
    atomic_init(&j->refs, 2);
    j->tid = tid;
    j->result = -EIO;
    j->max = max_frames;

    // The helper blocks every signal so that host handlers never run on it and its
    // syscalls are not interrupted.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t th;
    int e = pthread_create(&th, NULL, helper_main, j);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        free(j);
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
    e = pthread_clockjoin_np(th, NULL, CLOCK_MONOTONIC, &dl);
    if (e != 0) {
        // Stuck in the kernel on the target's behalf; it finishes (and detaches) by itself
        // once the target moves or dies. The job buffer outlives us via the refcount.
        pthread_detach(th);
        job_release(j);
        return e == ETIMEDOUT ? -ETIMEDOUT : -e;
    }
    long r = j->result;
    if (r > 0)
        memcpy(ips, j->ips, (size_t)r * sizeof(uintptr_t));
    free(j);
    return r;
}
