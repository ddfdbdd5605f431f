// CStrainPreload: what makes CStrainProbe a library any program can be started
// with (LD_PRELOAD=libStrainProbe.so, which `strain exec` sets): a constructor
// that installs the probe from the environment, and interposers on
// pthread_create (every thread gets an alternate signal stack before its start
// routine; a fault finds the thread's stack bounds in /proc/self/maps) and on
// sigaction/signal (a handler the
// program installs later is kept and chained to, not installed over the probe),
// and on write, writev and stdio's entry points (what reaches fd 2 is kept as
// standard error's tail, the program's output unchanged).
//
// Nothing here is called by name: the dynamic linker runs the constructor and
// binds the program's calls to the interposers.
#ifndef STRAIN_PRELOAD_H
#define STRAIN_PRELOAD_H

/// The environment `strain exec` sets for the probe; the constructor removes them
/// (and the library from LD_PRELOAD), so the program and its children see the
/// environment they would have had.
#define STRAIN_PRELOAD_DIRECTORY "STRAIN_PROBE_DIR"
#define STRAIN_PRELOAD_LIBRARY "STRAIN_PROBE_LIBRARY"
#define STRAIN_PRELOAD_THREAD_STACK "STRAIN_PROBE_THREAD_STACK"
#define STRAIN_PRELOAD_MAIN_STACK "STRAIN_PROBE_MAIN_STACK"
/// strain exec's pid: the program gets SIGTERM if strain dies without passing a
/// signal on (SIGKILL), instead of running on with nobody recording it.
#define STRAIN_PRELOAD_PARENT "STRAIN_PROBE_PARENT"
/// `ignore` when strain exec was started with SIGCHLD ignored: strain takes it back
/// to the default for itself (or the kernel would reap the program before strain
/// saw its status) and the constructor ignores it again in the program, before main.
#define STRAIN_PRELOAD_CHILD_SIGNAL "STRAIN_PROBE_CHILD_SIGNAL"
/// `1` when the probe follows the program's execs and children: a probed process
/// puts the probe back into the environment of every program it executes or spawns
/// (never into its own `environ`, which stays the program's).
#define STRAIN_PRELOAD_FOLLOW "STRAIN_PROBE_FOLLOW"
/// The program's pid, set by a probe that follows: a process of another pid is one of
/// the program's descendants (probed, never bound to strain's life), the same pid is
/// the program after an exec (a wrapper's, a shim's).
#define STRAIN_PRELOAD_ROOT "STRAIN_PROBE_ROOT"
/// The file (in the probe's folder) where the program's pid notes each image it runs:
/// `start` when a probed image begins, `exec PATH` before an exec, `exec-failed` after
/// one that returned. The last line says whether the image that ended had a probe.
#define STRAIN_PRELOAD_IMAGES_FILE "program-images.txt"
/// The image-name prefixes (`:`-separated: `python:libpython`) of the runtimes whose
/// processes note their handler installs, as strain's `OutsideWake.runtimeDefaults` lists them.
#define STRAIN_PRELOAD_HANDLER_IMAGES "STRAIN_PROBE_HANDLER_IMAGES"
/// The file (in the probe's folder, `handlers-PID.txt`) where each process of the tree
/// running one of those runtimes notes each signal handler its image installs through `sigaction` or `signal`: the signal's
/// number, one a line, from the image's first install on (an exec starts it again; a
/// forked child's begins with the installs it inherited, at most 3 a signal).
/// A runtime installs its own once at start-up (CPython's SIGINT), so a second install
/// of the same signal is the program's.
#define STRAIN_PRELOAD_HANDLERS_PREFIX "handlers-"
/// Lines a process writes there at most: a program that installs more (a loop
/// around `signal`) has shown what it does long before.
#define STRAIN_PRELOAD_HANDLER_LINES 256
/// The file (in the probe's folder, `timers-PID.txt`) where a process that arms a one-shot
/// libdispatch timer (`dispatch_after`, `dispatch_after_f`: Swift's `asyncAfter`) writes,
/// once, the address of the latest such deadline (`0x…` and a newline): 8 bytes of its
/// memory, CLOCK_MONOTONIC nanoseconds, 0 before any. strain reads them in
/// `/proc/PID/mem` when every thread waits, and does not call the program deadlocked
/// while that timer can still wake it.
#define STRAIN_PRELOAD_TIMERS_PREFIX "timers-"

#endif
