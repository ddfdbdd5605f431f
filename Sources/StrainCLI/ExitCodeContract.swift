import Foundation
import StrainText

/// The exit-code contract, written once: `strain --help`, `run --help`, `gate --help`,
/// the man page's EXIT STATUS (`strain _exit-codes mdoc`, put in by `.ci/manual`) and the
/// ExitCodes article (`strain _exit-codes markdown`) are all rendered from these rows, the
/// README names each code, and `ExitCodeContractTests` holds each place to them.
package enum ExitCodeContract {
    /// One code and what it means for the commands that run suites and for the gate.
    package struct Row: Sendable {
        package var code: Int32
        /// For `run` and `merge`.
        package var run: String
        /// For `gate` (mirrored as `exitCode` in gate.json); nil where the gate never exits so.
        package var gate: String?
        /// `run`'s meaning without other commands' reasons (`merge`'s shards, `baseline`'s
        /// `--force`), for `run --help` and `gate --help`; nil where ``run`` has none.
        package var runAlone: String? = nil
    }

    package static let rows: [Row] = [
        Row(code: StrainExitCode.success,
            run: "every trial ended in an outcome its suite expects",
            gate: "nothing regressed and no outcome got worse (improvements allowed)"),
        Row(code: StrainExitCode.unexpectedOutcome,
            run: "at least one trial ended in an outcome the suite does not expect",
            gate: "a regression, or an outcome that got worse"),
        Row(code: StrainExitCode.inputError,
            run: "a usage or input error, found before anything runs: a bad argument, suite file (every mistake with file:line:column), "
                + "missing file, unusable or locked `--out`, a `--resume` of another plan, an existing baseline without `--force`, "
                + "shards of different plans",
            gate: "a usage or input error, found before anything runs: a bad argument, suite file or `--out`, a missing file, "
                + "a bad or missing baseline, an unsupported schema version, a refused machine fingerprint, "
                + "another `--jobs` than the baseline's without `--allow-execution-mismatch`",
            runAlone: "a usage or input error, found before anything runs: a bad argument, suite file (every mistake with file:line:column), "
                + "missing file, unusable or locked `--out`, a `--resume` of another plan"),
        Row(code: StrainExitCode.harnessError,
            run: "a harness error: a trial ended in `harnessError` (its process ended without a result: Strain failed, or the code under test called exit), or the run's records could not be written; 3 is returned over 1 when a run has both; "
                + "`merge`: a shard or trial missing",
            gate: "a harness error or incomplete data: a row of the baseline missing from the candidate, a build that crashed",
            runAlone: "a harness error: a trial ended in `harnessError` (its process ended without a result: Strain failed, or the code under test called exit), or the run's records could not be written; 3 is returned over 1 when a run has both"),
        Row(code: StrainExitCode.toolMissing,
            run: "a counted measure cannot be taken: `measure: [instructions]` without `valgrind` or `objcopy` on PATH, "
                + "`STRAIN_INSTRUCTIONS_SOURCE=pmu` where no instruction counter opens, or an allocator preloaded through `LD_PRELOAD` "
                + "that lacks part of the malloc family (the message names the tool, the call or the library); "
                + "nothing ran, no folder was written",
            gate: "the same, from either build's `run`"),
        Row(code: StrainExitCode.interrupted,
            run: "`run` stopped by SIGINT (Ctrl-C): finished trials, run.json (marked interrupted) and the reports were written",
            gate: nil),
        Row(code: StrainExitCode.stopped(by: SIGQUIT),
            run: "`run` stopped by SIGQUIT (Ctrl-\\); as for 130",
            gate: nil),
        Row(code: StrainExitCode.terminated,
            run: "`run` stopped by SIGTERM; as for 130",
            gate: nil),
    ]

    /// The commands with codes of their own.
    package static let otherCommands: [String] = [
        "`bisect` uses 0 for an answer (a boundary, not deterministic, unbounded: whatever it found), 2 and 3 as `run` does, and never 1.",
        "`report` uses 0 once the report is written, whatever the run's outcomes (its run said those with its own code), and 2 and 3 as `run` does.",
        "`baseline` uses 0 once it has saved, listed, shown or deleted (a run with unexpected outcomes is saved all the same, and said so: the gate judges a candidate's outcomes against them), and 2 and 3 as `run` does; `compare` uses 0 whatever it finds (it never fails on a regression: `gate` does), and 2 for bad input.",
        "`exec` exits with its program's status, and 125, 126 or 127 for its own failures; `dump` uses 0, 2 and 3.",
        "`list` and `explain` use 0, and 2 for a bad argument (an unknown scenario, an option they do not take).",
        "`swift package strain …` (the SwiftPM plugin) can only exit 0 or 1: SwiftPM turns every failure of a plugin into 1. "
            + "CI that needs the codes calls the `strain` executable, or reads gate.json.",
    ]

    /// The sentence of ``otherCommands`` that starts with `` `command` ``, for that command's
    /// help page, after its usage as `run`'s table is: `Exit codes (as in strain --help): …`.
    package static func section(for command: String) -> String {
        "Exit codes (as in `strain --help`): " + (otherCommands.first { $0.hasPrefix("`\(command)`") } ?? "")
    }

    /// Which commands' meanings a help page lists.
    package enum Audience: Sendable { case all, run, gate }

    /// Plain text for a command's help: one code a line, its meaning after it, broken
    /// between words under 80 columns with a hanging indent (argument-parser would
    /// otherwise wrap the lines to the margin).
    package static func help(for audience: Audience) -> String {
        let width = 78, indent = String(repeating: " ", count: 7)
        func item(_ label: String, _ text: String) -> [String] {
            TextTable.wrap(text, width: width - indent.count).enumerated().map { index, piece in
                (index == 0 ? label.padding(toLength: indent.count, withPad: " ", startingAt: 0) : indent) + piece
            }
        }
        var lines: [String]
        switch audience {
        case .all: lines = ["Exit codes (the same table as the man page's EXIT STATUS and the ExitCodes article):"]
        case .run: lines = ["Exit codes (as in `strain --help`):"]
        case .gate: lines = ["Exit codes (as in `strain --help`; also `exitCode` in gate.json):"]
        }
        for row in rows {
            let label = "  \(row.code)"
            switch audience {
            case .all:
                lines += item(label, (row.gate == nil ? "" : "run, merge: ") + row.run)
                if let gate = row.gate { lines += item("", "gate: " + gate) }
            case .run: lines += item(label, row.runAlone ?? row.run)
            case .gate:
                // The gate's page shows no run column: "the same" is spelled out there.
                if let gate = row.gate {
                    let same = "the same, "
                    lines += item(label, gate.hasPrefix(same) ? (row.runAlone ?? row.run) + " (" + gate.dropFirst(same.count) + ")" : gate)
                }
            }
        }
        if audience == .all { lines += otherCommands.flatMap { TextTable.wrap($0, width: width) } }
        return lines.flatMap { $0.count > width ? TextTable.wrap($0, width: width) : [$0] }.joined(separator: "\n")
    }

    /// The table and the notes under it, as Markdown (the ExitCodes article holds it verbatim; the README names each code and links it).
    package static func markdown() -> String {
        func cell(_ text: String) -> String { text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "|", with: "\\|") }
        var lines = ["| code | `run`, `merge` | `gate` (mirrored as `exitCode` in gate.json) |", "| --- | --- | --- |"]
        for row in rows { lines.append("| \(row.code) | \(cell(row.run)) | \(row.gate.map(cell) ?? "–") |") }
        return (lines + otherCommands.map { "\n" + $0 }).joined(separator: "\n")
    }

    /// The man page's EXIT STATUS section in mdoc, one sentence a line, nothing for a lint to warn about.
    package static func mdoc() -> String {
        func text(_ value: String) -> String {
            let plain = value.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "…", with: "...")
            // mdoc wants each sentence on a line of its own, and mandoc's style check
            // lines of at most 80 bytes (the text is filled, so where one breaks is free);
            // a line that would start with a dot or a quote is escaped, not a request.
            let sentences = plain.replacingOccurrences(of: #"([.;]) (?=[A-Z`])"#, with: "$1\n", options: .regularExpression)
            return sentences.split(separator: "\n", omittingEmptySubsequences: false)
                .flatMap { TextTable.wrap(String($0), width: 72) }
                .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : $0 }
                .joined(separator: "\n")
        }
        var lines = [".Sh \"EXIT STATUS\"", "Every command exits with a code from one contract; CI scripts may rely on it.", ".Bl -tag -width 6n"]
        for row in rows {
            lines.append(".It \(row.code)")
            if let gate = row.gate {
                lines += ["run, merge:", text(row.run) + ".", ".br", "gate:", text(gate) + "."]
            } else {
                lines.append(text(row.run) + ".")
            }
        }
        lines.append(".El")
        for note in otherCommands { lines += [".Pp", text(note)] }
        return lines.joined(separator: "\n")
    }
}
