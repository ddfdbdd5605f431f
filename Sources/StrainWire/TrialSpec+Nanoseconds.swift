extension TrialSpec {
    /// Seconds as nanoseconds, saturating: no value of a suite can trap here, even
    /// one the parser should have refused (infinity, NaN, 1e300).
    package static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return seconds == .infinity ? UInt64.max / 2 : 0 }
        let value = seconds * 1e9
        return value >= Double(UInt64.max / 2) ? UInt64.max / 2 : UInt64(value)
    }
}
