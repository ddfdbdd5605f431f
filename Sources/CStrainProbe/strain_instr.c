// Instructions counted by Valgrind's callgrind around the scenario's measured work.
//
// What is counted: the instructions each thread runs while it holds scenario work
// (between strain_work_enter and strain_work_leave, outermost), and the host thread's
// from strain_instr_begin to strain_instr_end, for the work callgrind saw between
// those two. Not counted: harness threads, a thread's start and exit, a GCD worker
// spinning before it parks, a thread that finished `prepare` exiting: all of them
// are scheduled by time, and counted they made repetitions of one noop trial differ
// by half (361,362 and 696,727 instructions; the prepare thread's exit raced the work).
//
// How: the runner starts callgrind with instrumentation and collection off
// (`--instr-atstart=no --collect-atstart=no`). strain_instr_begin switches the
// instrumentation on for the process (START_INSTRUMENTATION, which also resets every
// thread's collection to off: measured, a thread that had turned its own off before
// the start was counted after it); each thread then turns its own collection on
// while it holds work (CALLGRIND_TOGGLE_COLLECT is per thread). strain_instr_end has
// callgrind write the part so far (trigger `strain-work`) and switches the
// instrumentation off. ZERO_STATS would not do: it zeroes the calling thread only
// (measured: a worker's instructions from before it were in the dump).
//
// Outside Valgrind the cost in strain_work_enter/leave is one relaxed load and a
// branch. Built without Valgrind's headers (<valgrind/callgrind.h>, Debian's
// `valgrind`), these functions do nothing, the part is never written, and the runner
// says so.
#include "strain_probe.h"

#include <stdatomic.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define STRAIN_HAS_CALLGRIND 1
#endif
#endif

// Odd while a count runs; each begin and end moves it on, so a thread that turned its
// collection on in an earlier count never turns it off again by mistake.
static _Atomic unsigned strain_instr_generation;
// The generation in which this thread turned its collection on; 0 when it has not.
static __thread unsigned strain_instr_thread_generation;

int strain_instr_under_valgrind(void) {
#ifdef STRAIN_HAS_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

int strain_instr_counting(void) {
#ifdef STRAIN_HAS_CALLGRIND
    return (atomic_load_explicit(&strain_instr_generation, memory_order_acquire) & 1) != 0;
#else
    return 0;
#endif
}

void strain_instr_thread_on(void) {
#ifdef STRAIN_HAS_CALLGRIND
    unsigned generation = atomic_load_explicit(&strain_instr_generation, memory_order_acquire);
    if (__builtin_expect((generation & 1) == 0, 1) || strain_instr_thread_generation == generation) return;
    strain_instr_thread_generation = generation;
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

void strain_instr_thread_off(void) {
#ifdef STRAIN_HAS_CALLGRIND
    unsigned generation = atomic_load_explicit(&strain_instr_generation, memory_order_acquire);
    if (__builtin_expect((generation & 1) == 0, 1) || strain_instr_thread_generation != generation) return;
    strain_instr_thread_generation = 0;
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

void strain_instr_begin(void) {
#ifdef STRAIN_HAS_CALLGRIND
    if (!RUNNING_ON_VALGRIND) return;
    CALLGRIND_START_INSTRUMENTATION;
    atomic_fetch_add_explicit(&strain_instr_generation, 1, memory_order_acq_rel);
    strain_instr_thread_on();
#endif
}

void strain_instr_end(void) {
#ifdef STRAIN_HAS_CALLGRIND
    if (!RUNNING_ON_VALGRIND) return;
    strain_instr_thread_off();
    CALLGRIND_DUMP_STATS_AT("strain-work");
    CALLGRIND_STOP_INSTRUMENTATION;
    atomic_fetch_add_explicit(&strain_instr_generation, 1, memory_order_acq_rel);
#endif
}
