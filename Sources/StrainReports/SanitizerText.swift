import StrainRecords

/// Sanitizer reports as text: per distinct race or memory error, its accesses (for a
/// race, both sides), where the memory came from and where the threads were created,
/// each with its innermost frames and their file:line. Shared by the terminal,
/// Markdown and HTML.
public enum SanitizerText {
    /// Frames shown of each stack.
    static let frameCount = 5

    /// The first trial of each scenario, parameters and strategy with sanitizer reports.
    static func distinct(_ run: RunRecord) -> [TrialRecord] {
        run.firstTrials(byProfile: true) { $0.sanitizerReports?.isEmpty == false }
    }

    /// `work (race.c:5) ← strain_thread_trampoline (strain_preload.c:199) ← …`.
    public static func stack(_ frames: [Frame]) -> String {
        frames.prefix(frameCount).map(SanitizerReport.place).joined(separator: " ← ") + (frames.count > frameCount ? " ← …" : "")
    }

    /// `exec program=./race gcd-global linux`.
    static func title(_ trial: TrialRecord) -> String { "\(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue)" }

    /// The lines the terminal prints, without the heading.
    static func lines(_ run: RunRecord) -> [String] {
        distinct(run).flatMap { trial -> [String] in
            ["  \(title(trial)): \(trial.outcome.message ?? trial.outcome.description)"]
                + (trial.sanitizerReports ?? []).prefix(3).flatMap { report in
                    ["    \(report.headline)"] + report.accesses.prefix(2).map { "      \($0.title): \(stack($0.frames))" }
                        + report.location.prefix(1).map { "      \($0.title): \(stack($0.frames))" }
                }
        }
    }

    static func markdown(_ run: RunRecord) -> String {
        let trials = distinct(run)
        guard !trials.isEmpty else { return "" }
        var out = "## Sanitizer reports\n\n"
        for trial in trials {
            out += "- **\(MarkdownReport.escape(title(trial)))**: \(MarkdownReport.escape(trial.outcome.message ?? ""))\n"
            for report in trial.sanitizerReports ?? [] {
                out += "  - \(MarkdownReport.escape(report.headline))"
                for stack in report.accesses + report.location.prefix(2) {
                    out += "<br>\(MarkdownReport.escape(stack.title)): `\(MarkdownReport.escapeHTML(self.stack(stack.frames)))`"
                }
                out += "\n"
            }
        }
        return out + "\n"
    }
}

extension TerminalReport {
    /// The sanitizer section, or nothing when no trial has a report.
    func sanitizerLines(_ run: RunRecord) -> [String] {
        let lines = SanitizerText.lines(run)
        return lines.isEmpty ? [] : ["", paint("Sanitizer reports", 1)] + lines
    }
}

extension HTMLReport {
    /// Each distinct report with its accesses side by side (they wrap under each other on a phone).
    static func sanitizer(_ run: RunRecord, into page: inout Page) {
        let trials = SanitizerText.distinct(run)
        guard !trials.isEmpty else { return }
        page.raw("<section id=\"sanitizer\">\n<h2>Sanitizer reports</h2>\n")
        for trial in trials {
            page.raw("<p><b>\(e(SanitizerText.title(trial)))</b>: \(e(trial.outcome.message ?? ""))</p>\n")
            for report in trial.sanitizerReports ?? [] {
                page.raw("<h3>\(e(report.headline))</h3>\n<div style=\"display:flex;flex-wrap:wrap;gap:1em\">")
                for stack in report.accesses {
                    page.raw("<div style=\"flex:1 1 18em;min-width:0;overflow-wrap:anywhere\"><b>\(e(stack.title))</b><ol start=\"0\">")
                    for frame in stack.frames.prefix(12) { page.raw("<li><code>\(e(SanitizerReport.place(frame)))</code></li>") }
                    page.raw("</ol></div>")
                }
                page.raw("</div>\n")
                for stack in report.location + report.threads {
                    page.raw("<p style=\"overflow-wrap:anywhere\">\(e(stack.title)): <code>\(e(SanitizerText.stack(stack.frames)))</code></p>\n")
                }
            }
        }
        page.raw("</section>\n")
    }
}
