import CStrainProbe

/// Real faults for scenarios that demonstrate the crash path.
public enum FaultInjection {
    /// Writes through a null pointer: a SIGSEGV far from any stack.
    public static func nullDereference() { strain_crash_null_dereference() }
}
