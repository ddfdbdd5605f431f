import Foundation

/// A time as every Strain message writes it (`850 µs`, `1.23 ms`, `45.6 ms`, `2.31 s`):
/// the one form for the outcome messages the child, the parent and `strain exec` write,
/// and for the tables (`Format.duration`), so a page never says `0.40s` beside `400.0 ms`.
package enum DurationText {
    package static func format(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.01 { return String(format: "%.1f ms", seconds * 1000) }
        if seconds >= 0.001 { return String(format: "%.2f ms", seconds * 1000) }
        return String(format: "%.0f µs", max(0, seconds) * 1e6)
    }
}
