import Foundation
import Testing

/// Text from a record is a value, not a command: run.json files whose names, parameter
/// values, messages and trace symbols hold GitHub workflow commands after a line break,
/// or spreadsheet formulas, fed to `strain gate` and `strain report` through the built
/// binary. No line of an output a CI log shows starts a workflow command Strain did not
/// mean, every such value stays on its line (its breaks shown as `\n`, `\r`), and no
/// CSV cell starts a formula.
@Suite struct RecordTextOutputTests {
    static let mask = "\n::add-mask::x"
    static let stop = "\n::stop-commands::y"
    static let error = "\n::error file=z::w"
    static let carriage = "\r::add-mask::r"
    /// One Character in Swift: a match on "\n" or "\r" lets it through.
    static let crlf = "\r\n::add-mask::crlf"

    /// The fixture's trials as JSON objects, changed by `change`, written as `name` in `folder`.
    static func record(in folder: String, name: String, _ change: (inout [[String: Any]]) -> Void) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: RecordBoundsTests.fixture))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var trials = object["trials"] as! [[String: Any]]
        change(&trials)
        object["trials"] = trials
        let path = (folder as NSString).appendingPathComponent(name)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The hostile strings in a scenario's name, a parameter's value, a harness error's
    /// message and a crash's first symbol (the fixture's trials 20, 21 and 10).
    static func hostile(_ trials: inout [[String: Any]]) {
        var key = trials[20]["key"] as! [String: Any]
        key["scenario"] = "fault" + mask
        key["parameters"] = [["name": "kind", "value": "broken-invariant" + stop + carriage], ["name": "megabytes", "value": "8" + crlf]]
        trials[20]["key"] = key
        var outcome = trials[21]["outcome"] as! [String: Any]
        outcome["message"] = "broke" + error + carriage
        trials[21]["outcome"] = outcome
        var trace = trials[10]["trace"] as! [String: Any]
        var frames = trace["firstFrames"] as! [[String: Any]]
        frames[0]["symbol"] = "sym" + mask + error
        trace["firstFrames"] = frames
        trials[10]["trace"] = trace
    }

    /// A baseline of the same record where the crash and the fault completed: so the
    /// candidate's outcome changed on both rows, which every output shows with evidence.
    static func sides(in folder: String) throws -> (baseline: String, candidate: String) {
        let candidate = try record(in: folder, name: "candidate.json", hostile)
        let baseline = try record(in: folder, name: "baseline.json") { trials in
            hostile(&trials)
            for index in [10, 20] { trials[index]["outcome"] = ["kind": "completed"] }
        }
        return (baseline, candidate)
    }

    /// The lines a GitHub runner reads: broken at `\n` and at `\r`, white space trimmed from their start.
    static func runnerLines(_ text: String) -> [String] {
        text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            .map { String($0.drop { $0.isWhitespace }) }
    }

    /// Lines a runner takes as a workflow command that Strain did not write: Strain's own are its
    /// `::error file=…,title=Strain gate…` annotations and `::notice title=Strain gate…`.
    static func injected(_ text: String) -> [String] {
        runnerLines(text).filter { line in
            guard line.hasPrefix("::") else { return false }
            let own = (line.hasPrefix("::error file=") && line.contains(",title=Strain gate")) || line.hasPrefix("::notice title=Strain gate")
            return !own
        }
    }

    @Test(arguments: [["text"], ["github"], ["text", "github"]])
    func noRecordTextBecomesAWorkflowCommandInTheGatesOutput(format: [String]) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (baseline, candidate) = try Self.sides(in: folder)
        let result = try await StrainBinary.run(["gate", candidate, "--baseline", baseline, "--out", folder + "/gate", "--format"] + format)
        // A harness error in the candidate: incomplete data.
        #expect(result.status == 3, "\(result.stdout)\n\(result.stderr)")
        #expect(Self.injected(result.stdout).isEmpty, "\(Self.injected(result.stdout))")
        #expect(Self.injected(result.stderr).isEmpty, "\(Self.injected(result.stderr))")
        // Strain's own commands are still there, each on its line.
        if format.contains("github") {
            #expect(Self.runnerLines(result.stdout).filter { $0.hasPrefix("::error file=") }.count == 3, "\(result.stdout)")
        }
        // The files it wrote, which CI steps print and post (gate.md is the pull request's comment),
        // and the sides' report.html: no line a workflow command either.
        for file in ["gate.md", "gate.html", "junit.xml", "gate.json", "baseline/report.html", "candidate/report.html"] {
            let path = folder + "/gate/" + file
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                if !file.hasSuffix("report.html") { Issue.record("no \(file)") }
                continue
            }
            #expect(Self.injected(text).isEmpty, "\(file): \(Self.injected(text))")
        }
        // A table row of gate.md stays one line: the value's line breaks are spaces there.
        let markdown = (try? String(contentsOfFile: folder + "/gate/gate.md", encoding: .utf8)) ?? ""
        #expect(markdown.contains("megabytes=8  ::add-mask::crlf\\]"), "\(markdown)")
        if format.contains("text") {
            // Each value on one line, its breaks shown.
            for shown in ["outcome: the harness failed in the candidate: broke\\n::error file=z::w\\r::add-mask::r",
                          "OUTCOME CHANGED fault\\n::add-mask::x[kind=broken-invariant\\n::stop-commands::y\\r::add-mask::r, megabytes=8\\r\\n::add-mask::crlf] main linux",
                          "at sym\\n::add-mask::x\\n::error file=z::w"] {
                #expect(result.stdout.contains(shown), "\(shown) not in \(result.stdout)")
            }
        }
    }

    @Test(arguments: ["md", "html", "junit", "csv"])
    func noRecordTextBecomesAWorkflowCommandInAReportOnStandardOutputOrInItsFile(format: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (_, candidate) = try Self.sides(in: folder)
        let result = try await StrainBinary.run(["report", candidate, "--format", format, "--out", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Self.runnerLines(result.stdout).filter { $0.hasPrefix("::") }
        #expect(lines.isEmpty, "\(lines)")
        // The same report as a file: a CI step that prints summary.md prints its lines.
        let file = folder + "/report." + format
        let written = try await StrainBinary.run(["report", candidate, "--format", format, "--out", file])
        #expect(written.status == 0, "\(written.stderr)")
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        #expect(!text.isEmpty && Self.runnerLines(text).filter { $0.hasPrefix("::") }.isEmpty, "\(Self.runnerLines(text).filter { $0.hasPrefix("::") })")
    }

    /// `compare`, `merge` and `baseline save`, `list` and `show` print a record's suite name, host,
    /// kernel and trial names on their lines (found by Tests/Fuzz/structured's injection family:
    /// each printed a record's `\n::add-mask::…` as a line of its own).
    @Test func noRecordTextBecomesAWorkflowCommandInCompareMergeOrBaselineLines() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (baseline, candidate) = try Self.sides(in: folder)
        // The candidate as a whole plan's only shard, its suite and machine named with hostile strings.
        let data = try Data(contentsOf: URL(fileURLWithPath: candidate))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var suite = object["suite"] as! [String: Any]
        suite["name"] = "fixture" + Self.mask
        object["suite"] = suite
        var environment = object["environment"] as! [String: Any]
        environment["host"] = "vm" + Self.error
        environment["kernel"] = "6.1" + Self.carriage
        object["environment"] = environment
        object["plan"] = ["hash": "0123456789abcdef", "trialCount": (object["trials"] as! [Any]).count, "shard": ["index": 1, "count": 1]]
        try FileManager.default.createDirectory(atPath: folder + "/shard", withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: folder + "/shard/run.json"))
        let store = ["--baselines", folder + "/store"]
        let commands: [[String]] = [
            ["compare", baseline, candidate],
            ["merge", folder + "/shard", "--out", folder + "/merged", "--format", "md"],
            ["baseline", "save", folder + "/shard/run.json", "--name", "hostile", "--force"] + store,
            ["baseline", "list"] + store,
            ["baseline", "show", "hostile"] + store,
        ]
        for command in commands {
            let result = try await StrainBinary.run(command)
            // The fixture's run has trials its suite does not expect: `merge` exits 1 for them, as `run` does.
            #expect(result.status == (command[0] == "merge" ? 1 : 0), "\(command): \(result.stderr)")
            #expect(Self.injected(result.stdout).isEmpty, "\(command): \(Self.injected(result.stdout))")
            #expect(Self.injected(result.stderr).isEmpty, "\(command): \(Self.injected(result.stderr))")
            // The value is still shown, on its line.
            let shown = command[0] == "compare" ? "fault\\n::add-mask::x" : "fixture\\n::add-mask::x"
            #expect(result.stdout.contains(shown), "\(command): \(shown) not in \(result.stdout)")
        }
    }

    @Test func aCSVCellThatWouldStartAFormulaGetsAnApostropheAndANegativeNumberStaysANumber() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try Self.record(in: folder, name: "run.json") { trials in
            for (index, scenario) in [(19, "=cmd|' /C calc'!A0"), (20, "+1+cmd"), (21, "@SUM(1+1)"), (10, "-2+3"), (11, "\tx")] {
                var key = trials[index]["key"] as! [String: Any]
                key["scenario"] = scenario
                trials[index]["key"] = key
            }
            var metrics = trials[4]["metrics"] as! [String: Any]
            metrics["custom"] = ["levels": -1.5]
            trials[4]["metrics"] = metrics
        }
        let result = try await StrainBinary.run(["report", path, "--format", "csv", "--out", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.components(separatedBy: "\r\n")
        // Each row's trial and scenario cells: the trial's name starts with its scenario.
        for scenario in ["=cmd|' /C calc'!A0", "+1+cmd", "@SUM(1+1)", "-2+3", "\tx"] {
            #expect(rows.contains { $0.contains(",'\(scenario),") }, "no neutralised '\(scenario)' in \(rows.filter { $0.contains(scenario) })")
        }
        // No cell starts a formula: every cell's first character (quotes aside).
        for row in rows.dropFirst() where !row.isEmpty {
            for cell in Self.cells(row) {
                let first = cell.first
                let formula = first.map { ["=", "+", "@", "\t", "\r"].contains($0) } ?? false
                    || (first == "-" && Double(cell) == nil)
                #expect(!formula, "\(cell) in \(row)")
            }
        }
        // A genuine number stays a number.
        #expect(rows[5].split(separator: ",").contains("-1.5"), "\(rows[5])")
    }

    /// RFC 4180 cells of `row`, unquoted.
    static func cells(_ row: String) -> [String] {
        var cells: [String] = []
        var cell = ""
        var quoted = false
        var characters = row.makeIterator()
        while let character = characters.next() {
            switch character {
            case "\"" where quoted: quoted = false
            case "\"" where cell.isEmpty: quoted = true
            case "," where !quoted: cells.append(cell); cell = ""
            default: cell.append(character)
            }
        }
        return cells + [cell]
    }
}
