import StrainRecords
import StrainText

/// A section that is a heading and a line per item.
package protocol ListSection: TextSection {
    /// The section's title.
    var heading: String { get }
    /// Each item, bold part (nil for none) and the rest.
    var items: [(bold: String?, text: String)] { get }
}

extension ListSection {
    package func terminalLines(_ style: TerminalStyle) -> [String] {
        items.isEmpty ? [] : style.heading(heading) + items.map { "  " + ($0.bold.map { "\($0): " } ?? "") + $0.text }
    }

    package func markdown() -> String {
        guard !items.isEmpty else { return "" }
        return "## \(heading)\n\n" + items.map { item in
            "- " + (item.bold.map { "**\(Markdown.escape($0))**: " } ?? "") + Markdown.escape(item.text) + "\n"
        }.joined() + "\n"
    }
}

/// The harness against its C reference loop, per sampling interval.
package struct ReferenceSection: ListSection {
    /// `sample-every=16: harness 16.7 ns/op, C loop 12.5 ns/op: 1.33× (median of 11)`.
    package var lines: [String]
    package var heading: String { "pthread_mutex lock/unlock, uncontended: the harness against a C loop" }
    package var items: [(bold: String?, text: String)] { lines.map { (nil, $0) } }
}

/// Which stack each configuration needs, from the strategies that overflowed and completed.
package struct StackVerdictSection: ListSection {
    /// One verdict per configuration that overflowed somewhere.
    package var verdicts: [StackVerdict]
    /// Per verdict, the first trial of its configuration that overflowed: what its trace link opens.
    package var overflows: [TrialRecord?]

    init(_ run: RunRecord) {
        verdicts = StackVerdict.verdicts(for: run)
        overflows = verdicts.map { verdict in
            run.trials.first { StackVerdict.Configuration($0.key) == StackVerdict.Configuration(verdict.key) && $0.outcome.kind == .stackOverflow }
        }
    }
    /// Leaves out the verdicts that only say "run it on a larger stack too".
    mutating func dropUndetermined() {
        let kept = verdicts.indices.filter { verdicts[$0].kind != .undetermined }
        (verdicts, overflows) = (kept.map { verdicts[$0] }, kept.map { overflows[$0] })
    }

    package var heading: String { "Stack verdicts" }
    package var items: [(bold: String?, text: String)] { verdicts.map { ($0.title, $0.explanation) } }
}
