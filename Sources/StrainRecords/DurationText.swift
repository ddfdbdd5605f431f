import Foundation

/// A time as every Strain message writes it (`620 ns`, `66.2 µs`, `1.23 ms`, `405 ms`,
/// `2.31 s`, `12.4 s`): three digits, whatever the unit, in the outcome messages of the
/// child, the parent and `strain exec`, the tables (`Format.duration`) and latencies
/// (`Format.nanoseconds`), so a page never says `0.40s` beside `400 ms`.
package enum DurationText {
    package static func format(_ seconds: Double) -> String {
        if seconds >= 99.95 { return String(format: "%.0f s", seconds) }
        if seconds >= 9.995 { return String(format: "%.1f s", seconds) }
        if seconds >= 0.999_5 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.099_95 { return String(format: "%.0f ms", seconds * 1000) }
        if seconds >= 0.009_995 { return String(format: "%.1f ms", seconds * 1000) }
        if seconds >= 0.000_999_5 { return String(format: "%.2f ms", seconds * 1000) }
        let nanoseconds = max(0, seconds) * 1e9
        if nanoseconds >= 99_950 { return String(format: "%.0f µs", nanoseconds / 1e3) }
        if nanoseconds >= 9_995 { return String(format: "%.1f µs", nanoseconds / 1e3) }
        if nanoseconds >= 999.5 { return String(format: "%.2f µs", nanoseconds / 1e3) }
        return String(format: "%.0f ns", nanoseconds)
    }
}
