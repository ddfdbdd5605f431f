internal import CStrainFaults
import CStrainProbe

/// The clock Strain measures a trial's work with: `CLOCK_MONOTONIC` in
/// nanoseconds, read without allocating, so a worker can time single
/// operations inside its loop.
///
/// It is the same clock the harness times the workload with, so a scenario's
/// timestamps and the trial's `wall` metric can be compared.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (the machine's boot); only
    /// differences between two readings mean anything.
    public static var nanoseconds: UInt64 { strain_monotonic_ns() }

    /// Seconds from `start` (a reading of ``nanoseconds``) to now.
    public static func seconds(since start: UInt64) -> Double {
        Double(nanoseconds &- start) / 1e9
    }
}

/// Yardsticks measured in C in the calling thread, for comparing a guard's
/// cost with the least a lock can cost on this machine.
public enum ReferenceLoop {
    /// Nanoseconds per `pthread_mutex_lock`/`unlock` pair, uncontended, over
    /// `iterations` pairs in a tight C loop on the calling thread.
    public static func pthreadMutexNanoseconds(iterations: Int) -> Double {
        strain_reference_mutex_ns(iterations)
    }
}
