import Foundation
import StrainRecords

/// Number formats shared by the renderers (terminal, Markdown, HTML) and the command line.
package enum Format {
    /// `1.23 ms`, `45.6 ms`, `2.31 s`, `850 µs`.
    package static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        return DurationText.format(seconds)
    }

    /// `0.201 s`, `12.3 s`, `340 s`, `0.0000662 s`: a time in seconds to 3 significant
    /// digits, for a column whose unit is `s`; never in exponent form (`6.62e-05 s`),
    /// down to a nanosecond (below it, `0 s`).
    package static func seconds(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        guard seconds.isFinite else { return "\(seconds) s" }
        if abs(seconds) >= 100 { return String(format: "%.0f s", seconds) }
        if abs(seconds) >= 0.001 || seconds == 0 { return String(format: "%.3g s", seconds) }
        if abs(seconds) < 5e-10 { return "0 s" }
        let decimals = min(9, 2 - Int(log10(abs(seconds)).rounded(.down)))
        return String(format: "%.\(decimals)f s", seconds)
    }

    /// `38.2 MiB`. With `exact` (a stack's size and use, which a sentence writes as
    /// `8 MiB`), `8 MiB` for exactly 8 MiB, and `8.0 MiB` only for a size near it, such
    /// as 8 MiB less a guard page; a measurement (a peak RSS) keeps its decimal.
    package static func bytes(_ bytes: Double?, exact: Bool = false) -> String {
        guard let bytes else { return "–" }
        for (factor, unit) in [(Double(1 << 30), "GiB"), (Double(1 << 20), "MiB")] where bytes >= factor {
            let whole = exact && bytes.truncatingRemainder(dividingBy: factor) == 0
            return String(format: whole ? "%.0f %@" : "%.1f %@", bytes / factor, unit)
        }
        if bytes >= Double(1 << 10) { return String(format: "%.0f KiB", bytes / Double(1 << 10)) }
        return String(format: "%.0f B", bytes)
    }

    /// The note under a table with a `– / SIZE` stack cell (it read `? / 8.0 MiB`, unexplained).
    package static let stackNotMeasured = "– / SIZE under stack: the thread's stack size; how much of it was used is not known, "
        + "because the trial died of a signal before it could measure it (an overflow's use is its whole stack)."

    /// `1,532`.
    package static func count(_ value: Double?) -> String {
        guard let value else { return "–" }
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value)) ?? String(Int(value))
    }

    /// `312 KiB / 512 KiB`; `– / 8.0 MiB` where the use was not measured (a table that
    /// shows one says why under it: ``stackNotMeasured``).
    package static func stack(used: Int?, size: Int?) -> String {
        switch (used, size) {
        case (nil, nil): "–"
        case (let used?, nil): bytes(Double(used), exact: true)
        case (nil, let size?): "– / \(bytes(Double(size), exact: true))"
        case (let used?, let size?): "\(bytes(Double(used), exact: true)) / \(bytes(Double(size), exact: true))"
        }
    }
}
