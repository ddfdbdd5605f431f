import StrainRecords

/// `summary.md`: the comparison tables, the stack verdicts and the traces,
/// fit for a pull-request comment.
package enum MarkdownReport {
    /// The most characters summary.md holds: a GitHub pull-request comment takes
    /// 65,536, and the gate's Markdown may sit beside it in a step summary.
    package static let characterLimit = 65_000

    /// summary.md, cut to ``characterLimit`` where it is longer: the head and "What
    /// failed" always stay; whole sections that do not fit are left out and named.
    package static func render(_ run: RunRecord) -> String {
        capped(full(run), limit: characterLimit)
    }

    /// `text` within `limit` characters: its sections (`## ` headings) kept in order
    /// while they fit, the rest left out and listed in a closing note that points to
    /// report.html.
    static func capped(_ text: String, limit: Int) -> String {
        guard text.count > limit else { return text }
        var sections = text.components(separatedBy: "\n## ")
        var out = sections.removeFirst()
        if sections.first?.hasPrefix("What failed\n") == true { out += "\n## " + sections.removeFirst() }
        let reserve = 1_500
        var leftOut: [String] = []
        for section in sections {
            let piece = "\n## " + section
            if out.count + piece.count <= limit - reserve { out += piece } else { leftOut.append(String(section.prefix { $0 != "\n" })) }
        }
        if out.count > limit - reserve { out = String(out.prefix(limit - reserve)) + "\n" }
        var names = leftOut.prefix(8).map { "“\($0.prefix(80))”" }.joined(separator: ", ")
        if leftOut.count > 8 { names += " and \(leftOut.count - 8) more" }
        return out + "\n---\n\n_Cut to fit a pull-request comment (\(Format.count(Double(limit))) characters): \(leftOut.count) section\(leftOut.count == 1 ? "" : "s") left out (\(names)). The whole report is report.html, and every number is in run.json._\n"
    }

    package static func full(_ run: RunRecord) -> String {
        let summary = RunSummary(run)
        var out = "# Strain run: \(escape(run.suite.name))\n\n"
        if let description = run.suite.description {
            // Code spans stay code; the rest is escaped as prose.
            out += MarkupText.codeSpans(description).map { span in
                span.code ? "`" + span.text.map { $0.isNewline || $0.asciiValue.map { $0 < 32 } == true ? " " : String($0) }.joined() + "`" : escape(span.text)
            }.joined() + "\n\n"
        }
        let unexpected = summary.unexpected.count
        out += "\(summary.trialCount) trials, \(unexpected == 0 ? "every outcome expected" : "**\(unexpected) unexpected**")\(run.interrupted == true ? " **\(escape(run.interruptionNote.trimmingCharacters(in: .whitespaces)))**" : "")."
        out += " Suite \(escape(run.suite.path)), started \(escape(run.startedAt)).\n\n"
        // The answer first: what failed, a line per key, before any table.
        let failed = FailedKeys(run).keys
        if !failed.isEmpty {
            out += "## What failed\n\n"
            for key in failed {
                out += "- **\(escape(key.key.description))**: \(escape(FailedKeys.line(key)))"
                if let reason = CrashReason.message(for: key.first) ?? key.first.outcome.message { out += " — \(escape(String(reason.prefix(300))))" }
                out += "\n"
            }
            out += "\n"
        }

        for group in summary.groups where !GuardComparison.covers(group, in: run) {
            out += "## \(escape(group.title))\n\n"
            let counted = group.countsAllocations
            out += "| strategy | outcome | median wall | peak RSS | threads | stack used / size | depth |\(counted ? " allocations |" : "")\n"
            out += "| --- | --- | ---: | ---: | ---: | ---: | ---: |\(counted ? " ---: |" : "")\n"
            for row in group.rows {
                let outcome = row.allExpected ? escape(row.outcomes) : "**\(escape(row.outcomes))** (expected \(escape(row.trials[0].expectedOutcomes.joined(separator: ", "))))"
                let depth = row.medianDepth.map { Format.count($0) } ?? row.medianFrames.map { "\(Format.count($0)) frames" } ?? "–"
                out += "| \(escape(row.strategy.description)) | \(outcome) | \(Format.duration(row.medianWallSeconds)) | \(Format.bytes(row.medianPeakRSSBytes)) | \(row.peakThreads.map(String.init) ?? "–") | \(Format.stack(used: row.stackHighWaterBytes, size: row.stackSizeBytes)) | \(depth) |\(counted ? " \(escape(row.allocationsText)) |" : "")\n"
            }
            out += "\n"
        }

        for table in GuardComparison(run).tables {
            out += "## \(escape(table.title))\n\n"
            out += "| " + table.header.map(escape).joined(separator: " | ") + " |\n"
            out += "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"
            for (index, row) in table.rows.enumerated() {
                var cells = GuardComparison.cells(row, rank: index + 1).map(escape)
                if !row.allExpected { cells[9] = "**\(cells[9])** (expected \(escape(row.trials[0].expectedOutcomes.joined(separator: ", "))))" }
                out += "| " + cells.joined(separator: " | ") + " |\n"
            }
            out += "\n"
        }

        for table in DeclaredMetrics(run).tables {
            out += "## \(escape(table.title)): the scenario's metrics\n\n"
            out += "| " + table.header.map(escape).joined(separator: " | ") + " |\n"
            out += "| --- |" + String(repeating: " ---: |", count: table.header.count - 1) + "\n"
            for row in table.rows { out += "| " + row.map(escape).joined(separator: " | ") + " |\n" }
            out += "\n"
        }

        let reference = ReferenceComparison.lines(run)
        if !reference.isEmpty {
            out += "## pthread_mutex lock/unlock, uncontended: the harness against a C loop\n\n"
            out += reference.map { "- \(escape($0))\n" }.joined() + "\n"
        }

        out += BisectText.markdown(run)
        let verdicts = StackVerdict.verdicts(for: run)
        if !verdicts.isEmpty {
            out += "## Stack verdicts\n\n"
            for verdict in verdicts { out += "- **\(escape(verdict.title))**: \(escape(verdict.explanation))\n" }
            out += "\n"
        }

        let sweeps = GrowthSweep.sweeps(run)
        if !sweeps.isEmpty {
            out += "## Growth\n\n"
            for sweep in sweeps {
                out += "- **\(escape(sweep.title))**: " + sweep.fitLines.map(escape).joined(separator: "; ") + "\n"
            }
            out += "\n"
        }

        let faults = distinctTraces(run)
        if !faults.isEmpty {
            out += "## Traces\n\n"
            for trial in faults {
                guard let trace = trial.trace else { continue }
                let reason = CrashReason.message(for: trial)
                out += "<details><summary>\(escapeHTML(trial.key.description)): \(escapeHTML(TraceText.headline(trace)))\(reason.map { " — " + escapeHTML($0) } ?? "")</summary>\n\n"
                if let reason { out += "Reason: `\(reason.replacingOccurrences(of: "`", with: "'"))`\n\n" }
                if let cycle = trace.cycle { out += "Cycle: `\(TraceText.cycle(cycle).replacingOccurrences(of: "`", with: "'"))`\n\n" }
                if let entry = TraceLayout(trace).entry { out += "Entered from: `\(entry.frame.displayName.replacingOccurrences(of: "`", with: "'"))`\n\n" }
                out += "```\n" + TraceText.lines(trace).map(code).joined(separator: "\n") + "\n```\n\n</details>\n\n"
            }
        }

        out += ProcessFaultText.markdown(run)
        out += ConfinementText.markdown(run)
        out += SanitizerText.markdown(run)
        let stalls = DumpText.distinctStalls(run)
        if !stalls.isEmpty {
            out += "## Stalls\n\n"
            if let summary = DumpText.watchdogSummary(run) { out += "\(escape(summary)).\n\n" }
            for trial in stalls {
                guard let dump = trial.dump else { continue }
                out += "<details><summary>\(escapeHTML(trial.key.description)): \(escapeHTML(DumpText.headline(trial)))</summary>\n\n"
                if let cycle = dump.waitCycle { out += "Wait cycle: \(escape(cycle.description))\n\n" }
                for group in dump.groups {
                    out += "- \(escape(DumpText.group(group)))\n"
                }
                out += "\n```\n"
                for group in dump.groups.prefix(6) {
                    out += code(DumpText.group(group, names: 8)) + "\n" + DumpText.frames(group).prefix(24).map(code).joined(separator: "\n") + "\n\n"
                }
                out += "```\n\n</details>\n\n"
            }
        }

        let caps = DumpText.capVerdicts(run)
        if !caps.isEmpty {
            out += "## Thread caps\n\n"
            for (key, verdict) in caps { out += "- \(escape(key.description)): **\(escape(verdict.message))**\n" }
            out += "\n"
        }

        let environment = run.environment
        out += "## Environment\n\n"
        out += "\(escape(environment.host)), \(environment.cores) cores, \(Format.bytes(Double(environment.memoryBytes))), \(escape(environment.kernel)) \(escape(environment.architecture)), Swift \(escape(environment.swiftVersion))"
        if let commit = environment.gitCommit { out += ", commit `\(commit.prefix(12))`" }
        if let build = environment.build {
            out += build.buildID.map { ", build `\($0.prefix(12))`" } ?? build.contentHash.map { ", binary hash `\($0.prefix(12))`" } ?? ""
        }
        out += ". Runner peak RSS \(Format.bytes(Double(run.runnerPeakRSSBytes))).\n"
        return out
    }

    /// One trial per distinct trace (scenario, parameters, strategy, profile, signal): repetitions repeat themselves.
    static func distinctTraces(_ run: RunRecord) -> [TrialRecord] {
        struct Seen: Hashable {
            var key: TrialKey
            var signal: Int32
        }
        var seen = Set<Seen>()
        return run.trials.filter { trial in
            guard let trace = trial.trace else { return false }
            return seen.insert(Seen(key: trial.key, signal: trace.signal)).inserted
        }
    }

    /// A line inside a fenced code block: its text is literal there, but a run
    /// of backticks would close the fence early.
    static func code(_ line: String) -> String {
        line.replacingOccurrences(of: "```", with: "`\u{200B}``")
    }

    /// Escapes what would break a GitHub-flavoured table cell or start markup:
    /// `|`, and `_` and `*`, which would turn `perform(_:) … (_:)` italic.
    static func escape(_ text: String) -> String {
        escapeHTML(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "_", with: "\\_").replacingOccurrences(of: "*", with: "\\*")
    }

    /// HTML's special characters escaped, and line breaks and other control
    /// characters flattened: a line ending inside a table row or a `<summary>`
    /// would end it early.
    static func escapeHTML(_ text: String) -> String {
        MarkupText.escape(text, extra: ["`": "&#96;"], lineBreaks: " ", control: " ")
    }
}
