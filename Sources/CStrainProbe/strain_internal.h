// Shared between the fault handler and the dump: not part of the module's API.
#ifndef STRAIN_INTERNAL_H
#define STRAIN_INTERNAL_H

#include <signal.h>

/// Whether a SIGSYS is the watchdog's dump request rather than a real fault.
int strain_is_dump_request(const siginfo_t *info);

/// Walks the calling thread's stack from `context` into its dump slot.
void strain_dump_answer(const siginfo_t *info, void *context);

#endif
