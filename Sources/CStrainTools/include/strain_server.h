// The trial server's C (strain_server.c): a process of the `strain` binary that
// has loaded everything once and starts each trial as a copy of itself.
//
// None of this runs in a signal handler. It runs in the server, a process that
// stays single-threaded, and in a trial's first moments after the copy, while it
// is still single-threaded too.
#ifndef STRAIN_SERVER_H
#define STRAIN_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Finds where glibc keeps the calling thread's kernel id (the `tid` of its
/// `struct pthread`, published for libthread_db as `_thread_db_pthread_tid`) and
/// checks it against gettid(). Call once, on the server's only thread, before
/// `strain_server_fork_trial`. Returns 0 or an errno value (ENOSYS: this glibc
/// does not say, and the server must not copy itself).
int strain_server_prepare(void);

/// Notes which signals a copy must put back to their default action: those the
/// server handles, and those it ignores (inherited through exec) among the ones
/// every trial starts with at their default, as a spawned trial gets them. Call
/// it last, once the server changes nothing more. Returns 0.
int strain_server_note_signals(void);

/// In a copy, on its only thread: every thread id cached in the thread's TLS blocks
/// (a 4-byte slot of any module's PT_TLS that holds `stale`, the server's thread id,
/// and is not half of a pointer into a mapping) is set to the copy's own. The Swift
/// runtime's once lock, Foundation's `Mutex` and libdispatch each cache the id in TLS
/// the first time a thread locks; a copy's main thread inherits the server's, so a
/// lock it held was marked as the server's, a thread waiting for it had the kernel
/// give the wait to the server (a priority-inheritance futex), and the unlock was
/// refused: the two spun until the trial's deadline. `strain_server_fork_trial` calls
/// it in the copy.
void strain_server_renew_tid_caches(pid_t stale);

/// Copies the calling process into a new one whose parent is the caller's parent
/// (clone with CLONE_PARENT): the runner that started the server, so the runner
/// reaps the trial, reads its resource use, may ptrace it, and its parent-death
/// signal is tied to the runner, exactly as for a child the runner spawned.
///
/// Like glibc's `_Fork`, it runs no `pthread_atfork` handlers (libdispatch's and
/// Foundation's would mark the copy as a child of a fork) and has the kernel write
/// the new process' id into glibc's thread descriptor (CLONE_CHILD_SETTID), so
/// pthread calls in the copy see its own id.
///
/// - Important: the caller must be single-threaded and hold no lock: the copy has
///   only the calling thread, and any lock another thread held stays held in it.
///   Its main thread must also never have locked a Swift `Mutex`: Swift caches the
///   thread id for it in a thread-local, which the copy would inherit stale.
/// Returns the new pid in the caller, 0 in the copy, -errno on failure.
pid_t strain_server_fork_trial(void);

/// In the copy, first thing: makes `output`, `error`, `result` and `shared` (or
/// -1) its fds 1, 2, 3 and 4 and /dev/null its fd 0, closes every other fd (the
/// server's socket among them), unblocks every signal, restores the default
/// action of the signals a trial must meet as a spawned one would, and puts the
/// copy in a process group of its own. Returns 0 or an errno value.
int strain_server_child_setup(int output, int error, int result, int shared);

/// Sends one message of `length` bytes on a SOCK_SEQPACKET socket, with `count`
/// (at most 8) descriptors attached. Returns 0 or an errno value.
int strain_server_send(int socket, const void *bytes, size_t length, const int *fds, size_t count);

/// Receives one message into `buffer` (at most `capacity` bytes) and up to
/// `*count` descriptors (close-on-exec) into `fds`; on return `*count` holds how
/// many came. Returns the message's length, 0 at end of stream, or -errno
/// (-EMSGSIZE when the message or its descriptors did not fit; those that came
/// are closed).
long strain_server_receive(int socket, void *buffer, size_t capacity, int *fds, size_t *count);

/// A SOCK_SEQPACKET socket pair, both ends close-on-exec. Returns 0 or an errno.
int strain_server_socket_pair(int ends[2]);

#ifdef __cplusplus
}
#endif

#endif
