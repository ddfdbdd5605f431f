import StrainRecords

/// What failed, first: a line per trial key with unexpected trials, its
/// outcomes counted, with the reason and where it happened.
package struct FailedSection: TextSection {
    package struct Entry: Sendable {
        package var key: FailedKeys.Key
        /// `timedOut ×9 of 10; expects completed`.
        package var line: String
        /// `completed, crashed`.
        package var expected: String
        /// What the child said on standard error, or the runtime's trap name.
        package var reason: String?
        /// The outcome's own message.
        package var message: String?
        /// `at` or `entered the recursion at`, and the frame's name.
        package var point: (label: String, name: String)?
    }

    package var entries: [Entry]

    init(_ run: RunRecord) {
        entries = FailedKeys(run).keys.map { key in
            let trial = key.first
            var point: (String, String)?
            if let trace = trial.trace, let frame = trace.cycle.map({ _ in TraceLayout(trace).entry?.frame }) ?? TraceText.pointOfFailure(trace) {
                point = (trace.cycle == nil ? "at" : "entered the recursion at", frame.displayName)
            }
            return Entry(key: key, line: FailedKeys.line(key), expected: trial.expectedOutcomes.joined(separator: ", "),
                         reason: CrashReason.message(for: trial), message: trial.outcome.message, point: point)
        }
    }

    /// The terminal shows what failed at its end instead: see ``recap(limit:)``.
    package func terminalLines(_ style: TerminalStyle) -> [String] { [] }

    /// What a failing run ends with: its failing keys, each once with its outcomes
    /// counted (`noop main ios: completed ×2 of 3; expects crashed`); at most `limit`, then how many more.
    package func recap(limit: Int = 10) -> [String] {
        var lines = entries.prefix(limit).map { "\($0.key.key): \($0.line)" }
        if entries.count > limit { lines.append("… and \(entries.count - limit) more keys: run.json and the reports list them all") }
        return lines
    }

    package func markdown() -> String {
        guard !entries.isEmpty else { return "" }
        var out = "## What failed\n\n"
        for entry in entries {
            out += "- **\(Markdown.escape(entry.key.key.description))**: \(Markdown.escape(entry.line))"
            if let reason = entry.reason ?? entry.message { out += " — \(Markdown.escape(String(reason.prefix(300))))" }
            out += "\n"
        }
        return out + "\n"
    }
}

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
    package var lines: [String]
    package var heading: String { "pthread_mutex lock/unlock, uncontended: the harness against a C loop" }
    package var items: [(bold: String?, text: String)] { lines.map { (nil, $0) } }
}

/// Which stack each configuration needs, from the strategies that overflowed and completed.
package struct StackVerdictSection: ListSection {
    package var verdicts: [StackVerdict]
    /// Per verdict, the first trial of its configuration that overflowed: what its trace link opens.
    package var overflows: [TrialRecord?]

    init(_ run: RunRecord) {
        verdicts = StackVerdict.verdicts(for: run)
        overflows = verdicts.map { verdict in
            run.trials.first { StackVerdict.Configuration($0.key) == StackVerdict.Configuration(verdict.key) && $0.outcome.kind == .stackOverflow }
        }
    }
    package var heading: String { "Stack verdicts" }
    package var items: [(bold: String?, text: String)] { verdicts.map { ($0.title, $0.explanation) } }
}

/// Thread caps a pool hit, with the workers the work needed.
package struct CapSection: TextSection {
    package var caps: [(trial: TrialKey, verdict: CapVerdict)]

    init(_ run: RunRecord) { caps = DumpText.capVerdicts(run) }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        caps.isEmpty ? [] : style.heading("Thread caps") + caps.map { "  \($0.trial): \($0.verdict.message)" }
    }

    package func markdown() -> String {
        guard !caps.isEmpty else { return "" }
        return "## Thread caps\n\n" + caps.map { "- \(Markdown.escape($0.trial.description)): **\(Markdown.escape($0.verdict.message))**\n" }.joined() + "\n"
    }
}

/// Time and memory against a swept parameter, with the fitted exponents.
package struct GrowthSection: TextSection {
    package var sweeps: [GrowthSweep]

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        sweeps.isEmpty ? [] : style.heading("Growth") + sweeps.flatMap { ["  \($0.title)"] + $0.fitLines.map { "    \($0)" } }
    }

    package func markdown() -> String {
        guard !sweeps.isEmpty else { return "" }
        return "## Growth\n\n" + sweeps.map { "- **\(Markdown.escape($0.title))**: " + $0.fitLines.map(Markdown.escape).joined(separator: "; ") + "\n" }.joined() + "\n"
    }
}

/// The page's one list of verdicts: stacks, thread caps and the C reference.
struct VerdictsBlock: PageSection {
    var stack: StackVerdictSection
    var caps: CapSection
    var reference: ReferenceSection

    func html(into page: inout HTMLReport.Page) {
        guard !stack.verdicts.isEmpty || !caps.caps.isEmpty || !reference.lines.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"verdicts\">\n<h2>Verdicts</h2>\n<ul>")
        for verdict in stack.verdicts { page.raw("<li><b>\(e(verdict.title))</b>: \(e(verdict.explanation))</li>") }
        for (key, verdict) in caps.caps { page.raw("<li><b>\(e(key.description))</b>: \(e(verdict.message))</li>") }
        for line in reference.lines { page.raw("<li>pthread_mutex lock/unlock, the harness against a C loop: \(e(line))</li>") }
        page.raw("</ul>\n</section>\n")
    }
}
