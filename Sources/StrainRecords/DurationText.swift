import Foundation

/// A time as every Strain message writes it (`620 ns`, `66.2 µs`, `850 µs`, `1.23 ms`,
/// `45.6 ms`, `2.31 s`): the one form for the outcome messages the child, the parent and
/// `strain exec` write, for the tables (`Format.duration`) and for latencies
/// (`Format.nanoseconds`), so a page never says `0.40s` beside `400.0 ms`, nor `66 µs`
/// for a time that a latency beside it writes `66.2 µs`. Below 100 ms, three digits.
package enum DurationText {
    package static func format(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.01 { return String(format: "%.1f ms", seconds * 1000) }
        if seconds >= 0.000_999_5 { return String(format: "%.2f ms", seconds * 1000) }
        let nanoseconds = max(0, seconds) * 1e9
        if nanoseconds >= 99_950 { return String(format: "%.0f µs", nanoseconds / 1e3) }
        if nanoseconds >= 9_995 { return String(format: "%.1f µs", nanoseconds / 1e3) }
        if nanoseconds >= 999.5 { return String(format: "%.2f µs", nanoseconds / 1e3) }
        return String(format: "%.0f ns", nanoseconds)
    }
}
