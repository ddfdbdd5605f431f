// CStrainTools: the C that runs outside the probe, in the runner (ptrace walks,
// demangling, stop signals, pipes) and the trial server (its fork); the faults
// on purpose and the reference loop a scenario calls are in CStrainFaults. Not
// async-signal-safe and need not be; it links libstdc++ (__cxa_demangle),
// libunwind-ptrace and liblzma, so it stays out of the preloadable probe
// (CStrainProbe, libStrainProbe.so) and out of the SDK (StrainKit).
#ifndef STRAIN_TOOLS_H
#define STRAIN_TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <spawn.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Names for frames (strain_tools.c)

/// Demangles a Swift symbol with the runtime's own demangler; returns a malloc'd
/// string the caller frees, or NULL when `name` is not a Swift symbol.
char *strain_demangle_swift(const char *name);

/// Demangles an Itanium C++ symbol; returns a malloc'd string or NULL.
char *strain_demangle_cxx(const char *name);

// MARK: - Lifetimes: the runner's stop signals, the child's tie to its runner (strain_lifecycle.c)

/// The signal a child asks to get when its runner dies (PR_SET_PDEATHSIG).
#define STRAIN_PARENT_DEATH_SIGNAL (SIGRTMAX)

/// The runner's side: SIGINT, SIGTERM and SIGQUIT only set a flag the supervisor polls
/// (a second one ends the runner at once); SIGPIPE is ignored. Returns 0 or errno.
int strain_runner_catch_stop_signals(void);
/// The first stop signal caught (SIGINT, SIGTERM or SIGQUIT), 0 while none has been.
int strain_runner_stop_signal(void);
/// Sets the stop flag as if `signal_number` had arrived (tests).
void strain_runner_request_stop(int signal_number);

/// The child's side: when the runner dies, the kernel sends
/// `STRAIN_PARENT_DEATH_SIGNAL`, whose handler kills the child's process group
/// (the child and the grandchildren in it). Checks that the parent is still
/// `expected_parent`, and kills the group at once if it is not.
///
/// - Important: the kernel sends the parent-death signal when the *thread* that
///   spawned the child exits, so the runner spawns trials from one long-lived thread.
/// Returns 0 or an errno value.
int strain_child_bind_to_parent(int expected_parent);

/// Where the parent-death signal cannot be asked for (Valgrind refuses
/// `PR_SET_PDEATHSIG` with EINVAL): forks a watcher process, with no descriptor of the
/// child's open and SIGPIPE ignored, that checks every second whether the runner is
/// still there (its pid alive, not a zombie, with the start time it had: Valgrind does
/// not know pidfd_open) and kills the child's process group when it is not. A runner
/// already gone kills the child at once. A process, not a thread: it runs nothing
/// inside the child, so a counted trial's instructions do not depend on when it was
/// scheduled. Call it while the child is single-threaded. Returns 0 or an errno value.
int strain_child_watch_parent_by_process(int parent);

/// The counted trial server's watcher (a server under Valgrind, which refuses the
/// parent-death signal): forks a process, with no descriptor of the server's open,
/// that waits for the runner (`parent`) or the server to end. When the runner ends
/// first, it kills the server and removes `folder` (the counted trials' folder: the
/// stripped copy and callgrind's outputs), trying for up to 5 s while a copy killed
/// by its own watcher may still be writing there; a folder whose last component does
/// not start with `strain-callgrind-` is never touched. When the server ends first
/// (the runner stopped or replaced it), it exits and leaves the folder to the runner.
/// Call it while the server is single-threaded. Returns 0 or an errno value.
int strain_server_watch_runner(int parent, const char *folder);

/// Makes the calling process the child subreaper of its descendants
/// (PR_SET_CHILD_SUBREAPER). Returns 0 or an errno.
int strain_runner_become_subreaper(void);

/// Adds "close every descriptor from `lowest` up" to a spawn's file actions
/// (glibc's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module
/// does not import). Returns 0 or an errno value.
int strain_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// A pipe whose both ends are close-on-exec from the moment they exist (pipe2),
/// so a spawn on another thread never inherits them. Returns 0 or an errno value.
int strain_pipe_cloexec(int ends[2]);

// MARK: - `strain exec` (strain_lifecycle.c)

/// Passes SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 sent to this
/// process on to `pid` (a terminal's, which reach the program by themselves, are
/// not), and unblocks them in the calling thread. With `pid` 0 (the program not
/// started yet) they are kept, and sent on by the call that gives the pid.
/// Returns 0 or an errno value.
int strain_exec_forward_signals(int pid);

/// Starts the witness: a child in strain's process group that notes when each of
/// those signals reaches it, so that one sent to the whole group (which reaches the
/// program by itself) is not passed on a second time. Returns 0 or an errno value;
/// without it every signal is passed on, as before.
int strain_exec_start_witness(void);

/// The name the witness gives itself, so `ps` and `strain dump` tell it from the program.
/// Not "strain-…": `pkill strain` matched it beside strain, so the witness saw the signal
/// strain got and strain passed nothing on (re-trial 33c).
#define STRAIN_WITNESS_NAME "exec-witness"

/// Kills and reaps the witness.
void strain_exec_stop_witness(void);

/// The witness's pid, or 0 when none runs.
int strain_exec_witness_pid(void);

/// How many of those signals `strain exec` has seen so far (passed on, or a
/// terminal's that reached the program by itself).
unsigned long strain_exec_signals_seen(void);

/// The last of those signals `strain exec` has seen, or 0 for none.
int strain_exec_last_signal(void);

/// Whether strain was started with `signal_number` ignored (read before its main, which
/// ignores SIGPIPE; only SIGPIPE and the signals strain exec passes on are read, others
/// answer 0): such a signal is not passed on, and the program keeps it ignored.
int strain_started_ignoring_signal(int signal_number);

/// Adds glibc's own signals (32 and 33) to `set`, a posix_spawn default set, unless strain
/// was started with them ignored: glibc's posix_spawn ignores them in the child otherwise.
void strain_default_internal_signals(sigset_t *set);

/// Puts SIGCHLD back to its default action if it is ignored (inherited through
/// exec: the kernel would reap children before their status is read). Returns 1
/// when it was ignored, 0 when not, -1 when it could not be read or set.
int strain_child_signal_take_back(void);

/// pidfd_open(2): a descriptor that polls readable when `pid` ends; -errno when
/// the kernel has none (before Linux 5.3).
int strain_pidfd_open(int pid);

/// Ends this process by `signal_number`, as its program ended (no core of its
/// own): a caller of `strain exec` sees the program's status, 139 for SIGSEGV.
void strain_exit_like_signal(int signal_number) __attribute__((noreturn));

/// sigqueue(3) with an int value; 0 or an errno value.
int strain_sigqueue(int pid, int signal_number, int value);

// MARK: - Remote unwinding (strain_ptrace.c; used by the parent)

/// Unwinds thread `tid` of a child this process may ptrace, from outside, with
/// ptrace and libunwind-ptrace: attaches without stopping the others, walks up
/// to `max_frames` instruction pointers into `ips`, detaches, leaving the thread
/// blocked where it was. Returns the number of frames (>= 0) or -errno. `state`
/// (may be NULL) receives the thread's state letter from /proc before attaching.
long strain_ptrace_unwind(int tid, uintptr_t *ips, size_t max_frames, char *state);

#ifdef __cplusplus
}
#endif

#endif
