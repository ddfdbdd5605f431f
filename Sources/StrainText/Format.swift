import Foundation
import StrainRecords

/// Number formats shared by the renderers (terminal, Markdown, HTML) and the command line.
package enum Format {
    /// `1.23 ms`, `45.6 ms`, `2.31 s`, `850 µs`.
    package static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        return DurationText.format(seconds)
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

    /// A message from a record as advice quotes it: its first line, at most 200 characters.
    package static func quoted(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 200 ? String(line.prefix(199)) + "…" : line
    }

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

extension Format {
    /// A value in its unit, as the reports show declared metrics: `1.2 MiB`, `3.4 ms`, `0.95`.
    package static func value(_ value: Double?, unit: MetricDescriptor.Unit) -> String {
        guard let value else { return "–" }
        switch unit {
        case .seconds: return duration(value)
        case .nanoseconds: return nanoseconds(value)
        case .bytes: return bytes(value)
        case .count: return value.isFinite && abs(value) < 1e15 && value == value.rounded() ? count(value) : String(format: "%g", value)
        case .perSecond: return rate(value)
        case .ratio: return String(format: "%.3g", value)
        case .allocations: return MetricDescriptor.Unit.allocations(value)
        case .instructions: return MetricDescriptor.Unit.instructions(value)
        }
    }

    /// `26.4 M/s`, `358 k/s`.
    package static func rate(_ perSecond: Double?) -> String {
        perSecond.map(MetricDescriptor.Unit.rate) ?? "–"
    }

    /// `120 ns`, `1.40 µs`, `12.6 µs`, `126 µs`, `1.10 ms`: a latency as every other time
    /// (``DurationText``), three digits (they read `126.0 µs` and `1.1 ms`).
    package static func nanoseconds(_ value: Double?) -> String {
        value.map { DurationText.format($0 / 1e9) } ?? "–"
    }
}
