internal import CStrainFaults
import CStrainProbe

/// Real faults for scenarios that demonstrate the crash path: each ends the
/// trial `crashed` with the signal and a trace.
public enum FaultInjection {
    /// Writes through a null pointer: a SIGSEGV far from any stack.
    public static func nullDereference() { strain_crash_null_dereference() }
    /// Writes to a shared mapping whose file was truncated under it: a real SIGBUS.
    public static func busError() { strain_crash_bus_error() }
    /// Divides an integer by zero in C: a real SIGFPE (Swift's `/` would trap first).
    public static func divideByZero(_ numerator: Int32) -> Int32 { strain_crash_divide_by_zero(numerator) }
    /// Calls libstdc++'s `std::terminate()`: what an uncaught C++ exception ends in.
    public static func cxxTerminate() { strain_crash_cxx_terminate() }
}

/// How the fault handler walks the stack of a fault (an overflow's 131,000 frames on
/// 8 MiB): for scenarios that measure the capture itself, side by side in one run.
public enum FaultWalk: String, CaseIterable, Sendable {
    /// libunwind's cached fast trace on threads warmed for it (every thread that runs
    /// scenario work), the `unw_step` loop where it cannot be used: the default.
    case fast
    /// The `unw_step` loop on every thread: the walk before the fast trace, still its fallback.
    case step

    /// Makes the handler walk this way from now on, in this trial's process.
    public func use() { strain_probe_prefer_step_walk(self == .step ? 1 : 0) }
}
