// Instructions counted by Valgrind's callgrind around the scenario's measured work.
//
// Why instrumentation switched on and off, not collection: callgrind's collection
// state (CALLGRIND_TOGGLE_COLLECT, --collect-atstart) and CALLGRIND_ZERO_STATS are
// per thread, so a GCD worker that ran before the work would bring its earlier
// costs along (measured: a thread's instructions from before ZERO_STATS were in the
// dump). START/STOP_INSTRUMENTATION apply to the whole process: with the runner's
// `--instr-atstart=no`, nothing before `strain_instr_begin` is counted on any
// thread. The dump is written before the stop, on the thread that ran the work.
// Harness threads that run beside the work turn their own collection off.
//
// The client requests are a few no-op instructions outside Valgrind. Built without
// Valgrind's headers (<valgrind/callgrind.h>, Debian's `valgrind`), these functions do
// nothing, the dump is never written, and the runner reports that.
#include "strain_probe.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define STRAIN_HAS_CALLGRIND 1
#endif
#endif

int strain_instr_under_valgrind(void) {
#ifdef STRAIN_HAS_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

void strain_instr_begin(void) {
#ifdef STRAIN_HAS_CALLGRIND
    if (RUNNING_ON_VALGRIND) CALLGRIND_START_INSTRUMENTATION;
#endif
}

void strain_instr_end(void) {
#ifdef STRAIN_HAS_CALLGRIND
    if (RUNNING_ON_VALGRIND) {
        CALLGRIND_DUMP_STATS_AT("strain-work");
        CALLGRIND_STOP_INSTRUMENTATION;
    }
#endif
}

void strain_instr_exclude_thread(void) {
#ifdef STRAIN_HAS_CALLGRIND
    // Collection starts on for every thread (callgrind's default): one toggle turns it off.
    if (RUNNING_ON_VALGRIND) CALLGRIND_TOGGLE_COLLECT;
#endif
}
