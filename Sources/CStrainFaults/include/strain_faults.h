// CStrainFaults: the C a scenario calls in a trial's ordinary code: faults on
// purpose (each a real fault, not raise()) and the reference loop for locks.
// StrainKit's only C besides the probe: no ptrace, no libunwind-ptrace, no lzma,
// no fork code. std::terminate comes from libstdc++, which the Swift runtime
// (libswiftCore) loads in every Swift program on Linux anyway.
#ifndef STRAIN_FAULTS_H
#define STRAIN_FAULTS_H

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Faults on purpose

/// Writes a null pointer dereference: a real SIGSEGV away from any stack.
void strain_crash_null_dereference(void);

/// A real SIGBUS: a write to a shared mapping whose file was truncated under it.
void strain_crash_bus_error(void);
/// A real SIGFPE: an integer division by zero in C (returns only if it did not trap).
int strain_crash_divide_by_zero(int numerator);
/// libstdc++'s std::terminate(): a C++-style abort with its message on stderr.
void strain_crash_cxx_terminate(void);

// MARK: - The reference loop

/// The reference for measuring locks: nanoseconds per uncontended
/// pthread_mutex_lock/unlock pair over `iterations` pairs, in a tight C loop.
double strain_reference_mutex_ns(long iterations);

#ifdef __cplusplus
}
#endif

#endif
