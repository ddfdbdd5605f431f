import StrainRecords
import StrainText

/// A run as every report shows it, built once from its record: the head, then
/// each section as a plain value whose rows are already grouped, sorted and
/// formatted. The terminal, summary.md, report.html and junit.xml are views of
/// it that only lay it out (the gate's `GateReport` has the same shape).
///
/// A new section is a type that conforms to ``TextSection`` (and ``PageSection``
/// when the page shows it) with a builder, one stored property here, and its
/// place in ``sections`` and ``pageSections``.
package struct RunReport: Sendable {
    /// What the run was and how it went, in one line's worth of values.
    package struct Head: Sendable {
        /// The suite's `name:`.
        package var suiteName: String
        /// The suite's description, split at its backticks into code and prose.
        package var description: [(code: Bool, text: String)]?
        /// The suite file, as given.
        package var suitePath: String
        /// When the run started and finished (ISO 8601).
        package var startedAt: String
        /// When it finished.
        package var finishedAt: String
        /// Trials run, and how many ended as the suite did not expect.
        package var trialCount: Int
        /// Trials that ended as the suite did not expect.
        package var unexpectedCount: Int
        /// Trials that ended `harnessError`: they make the run's exit code 3, over the 1
        /// its other unexpected trials would give (re-trial 35q, F1).
        package var harnessErrorCount = 0
        /// `, 2 of them harnessError (exit code 3)` after the count of unexpected trials, ` (harnessError: exit code 3)`
        /// when they all are; empty without any.
        package var harnessErrorNote: String {
            if harnessErrorCount == 0 { return "" }
            return harnessErrorCount == unexpectedCount ? " (harnessError: exit code 3)" : ", \(harnessErrorCount) of them harnessError (exit code 3)"
        }
        /// ` (interrupted after 28 of 35 planned trials)`, or nil for a run that finished its plan.
        package var interruption: String?
    }

    /// The suite, the counts and the verdict line.
    package var head: Head
    /// What failed, a line per trial key.
    package var failed: FailedSection
    /// A table per comparison group that no ranking shows.
    package var outcomes: OutcomeSection
    /// The rankings the scenarios asked for.
    package var rankings: RankingSection
    /// The scenarios' own metrics, per group.
    package var metrics: MetricsSection
    /// The harness against its C reference loop.
    package var reference: ReferenceSection
    /// The bisect's answers, when the run is a bisect.
    package var bisect: BisectReportSection
    /// Which stack each configuration needs.
    package var stackVerdicts: StackVerdictSection
    /// Growth with a swept parameter, with fitted exponents.
    package var growth: GrowthSection
    /// A trace per distinct fault.
    package var traces: TraceSection
    /// Faults of a program's other processes.
    package var processFaults: ProcessFaultSection
    /// Confinement violations, as evidence.
    package var confinement: EvidenceSection
    /// Sanitizer reports, as evidence.
    package var sanitizer: EvidenceSection
    /// A thread dump per distinct stall.
    package var stalls: StallSection
    /// Thread caps the pools hit.
    package var caps: CapSection
    /// Why, what to do, and the stalls: summary.md's answer after What failed.
    package var answer: AnswerBlock
    /// The machine, toolchain and build.
    package var environment: EnvironmentSection
    /// Every trial with its verdict, per scenario: what junit.xml lists.
    package var cases: TrialCases
    /// Thread count over time, per scenario, for the page.
    package var timelines: TimelineSection
    /// Where each trial is on the page: its evidence, or its row.
    package var trialAnchors: TrialAnchors
    /// The scenarios in the order the run first met them.
    package var scenarios: [String]
    /// Whether the run is a bisect's: every trial a probe of one of its searches. Its
    /// answer then comes first, and the probes' tables fold away.
    package var isBisect: Bool

    /// The report of `run`: every section computed here, once.
    package init(_ run: RunRecord) {
        let summary = RunSummary(run)
        let comparison = GuardComparison(run)
        head = Head(suiteName: run.suite.name, description: run.suite.description.map(MarkupText.codeSpans), suitePath: run.suite.path,
                    startedAt: run.startedAt, finishedAt: run.finishedAt, trialCount: summary.trialCount,
                    unexpectedCount: summary.unexpected.count, interruption: run.interrupted == true ? run.interruptionNote : nil)
        head.harnessErrorCount = summary.unexpected.filter { $0.outcome.kind == .harnessError }.count
        failed = FailedSection(run)
        outcomes = OutcomeSection(summary.groups.filter { !GuardComparison.covers($0, in: run) })
        rankings = RankingSection(comparison)
        metrics = MetricsSection(tables: DeclaredMetrics(run).tables)
        reference = ReferenceSection(lines: ReferenceComparison.lines(run))
        bisect = BisectReportSection(run)
        stackVerdicts = StackVerdictSection(run)
        growth = GrowthSection(sweeps: GrowthSweep.sweeps(run))
        traces = TraceSection(run)
        processFaults = ProcessFaultSection(run)
        confinement = EvidenceSection.confinement(run)
        sanitizer = EvidenceSection.sanitizer(run)
        stalls = StallSection(run)
        trialAnchors = TrialAnchors(run, traces: traces, stalls: stalls, sanitizer: sanitizer, confinement: confinement)
        caps = CapSection(run)
        environment = EnvironmentSection(run)
        cases = TrialCases(run)
        timelines = TimelineSection(cases)
        scenarios = run.trials.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let probed = Set(run.bisect?.searches.flatMap(\.probes) ?? [])
        isBisect = run.bisect != nil && !run.trials.isEmpty && run.trials.allSatisfy { probed.contains($0.index) }
        // A bisect's answer tells deep recursion from unbounded: its probes' "run it on a
        // larger stack too" verdicts would only repeat the question under the answer.
        if isBisect { stackVerdicts.dropUndetermined() }
        answer = AnswerBlock(stack: stackVerdicts, failed: failed, trials: run.trials, caps: caps, stalls: stalls, isBisect: isBisect)
    }

    /// The sections in the order summary.md and the terminal show them: what
    /// failed, the tables, the verdicts, the evidence, the environment.
    /// A bisect's answer comes first, and its probes' tables fold into one section.
    package var sections: [any TextSection] {
        if isBisect {
            return [bisect, failed, ProbeTables(outcomes: outcomes, metrics: metrics), rankings, reference, stackVerdicts, growth, traces, processFaults, confinement, sanitizer, stalls, caps, environment]
        }
        return [failed, outcomes, rankings, metrics, reference, bisect, stackVerdicts, growth, traces, processFaults, confinement, sanitizer, stalls, caps, environment]
    }

    /// summary.md's sections: ``sections`` with the answer right after What failed, the
    /// stack verdicts and caps it holds no longer repeated further down.
    package var markdownSections: [any TextSection] {
        var sections = sections
        guard !answer.isEmpty else { return sections }
        sections.removeAll { ($0 is StackVerdictSection && !isBisect) || $0 is CapSection }
        let at = sections.firstIndex { $0 is FailedSection }.map { $0 + 1 } ?? 0
        sections.insert(answer, at: at)
        return sections
    }

    /// The terminal's sections: ``sections`` with the answer last, just before the
    /// closing count, the stack verdicts and caps it holds no longer shown above.
    package var terminalSections: [any TextSection] {
        guard !answer.isEmpty else { return sections }
        var sections = sections
        sections.removeAll { ($0 is StackVerdictSection && !isBisect) || $0 is CapSection }
        return sections + [answer]
    }

    /// The sections report.html shows after its answer box and its scenarios, in order
    /// (a bisect's answer is shown before the scenarios instead).
    package var pageSections: [any PageSection] {
        (isBisect ? [] : [bisect]) + [verdicts, traces, processFaults, confinement, sanitizer, stalls, environment]
    }

    /// report.html's Verdicts: what its answer box does not already say, as summary.md
    /// leaves out (each stack verdict was on the page twice, under Why and Verdicts).
    var verdicts: VerdictsBlock {
        var stack = stackVerdicts, caps = caps
        if !answer.isEmpty && !isBisect { (stack.verdicts, stack.overflows) = ([], []) }
        if !answer.isEmpty { caps.caps = [] }
        return VerdictsBlock(stack: stack, caps: caps, reference: reference)
    }
}

/// A bisect's probes, one table per probed value, folded under one heading: in the
/// terminal as they are, in summary.md closed, after the answer.
struct ProbeTables: TextSection {
    var outcomes: OutcomeSection
    var metrics: MetricsSection

    func terminalLines(_ style: TerminalStyle) -> [String] { outcomes.terminalLines(style) + metrics.terminalLines(style) }

    func markdown() -> String {
        let count = outcomes.tables.count
        guard count > 0 else { return "" }
        // `###` inside: summary.md's cap keeps or leaves out whole `##` sections.
        let tables = (outcomes.markdown() + metrics.markdown()).replacingOccurrences(of: "\n## ", with: "\n### ")
        let body = tables.hasPrefix("## ") ? "#" + tables : tables
        return "## Probes\n\n<details><summary>\(count) table\(count == 1 ? "" : "s"), one per probed value</summary>\n\n\(body)\n</details>\n\n"
    }
}

/// A section of ``RunReport`` as the text formats lay it out.
package protocol TextSection: Sendable {
    /// The section in the terminal, a blank line and its heading first; none when it is empty.
    func terminalLines(_ style: TerminalStyle) -> [String]
    /// The section in summary.md, its `## ` heading first; "" when it is empty.
    func markdown() -> String
}

/// A section of ``RunReport`` as report.html lays it out.
package protocol PageSection: Sendable {
    /// Appends the section's `<section>` to `page`; nothing when it is empty.
    func html(into page: inout HTMLReport.Page)
}

/// Shorthands the views share.
enum Markdown {
    static func escape(_ text: String) -> String { MarkdownReport.escape(text) }
    static func escapeHTML(_ text: String) -> String { MarkdownReport.escapeHTML(text) }
    static func code(_ line: String) -> String { MarkdownReport.code(line) }
}
