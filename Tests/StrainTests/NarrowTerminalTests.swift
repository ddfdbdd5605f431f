import Foundation
import StrainRecords
import StrainReports
import StrainText
import Testing

/// What `strain` prints in an 80-column window: every line fits, and no word is
/// cut in two to make it fit (a table drops, wraps or moves a cell under its row).
@Suite(.timeLimit(.minutes(10))) struct NarrowTerminalTests {
    /// The whitespace-separated words of `text`.
    static func words(_ text: String) -> Set<Substring> {
        Set(TerminalStyle.spacedAtSymbolBreaks(text).split(whereSeparator: \.isWhitespace))
    }

    /// Overflows where the suite expects none, with tables as wide as the default suite's:
    /// at 80 columns the old fitting cut `stackOverflow`, `thread(512KiB)` and `threads`.
    static let failingSuite = """
        name: narrow-failing
        runs:
          - scenario: stack-depth
            parameters: {limit: 2000}
            strategies: [main, thread(512KiB), "thread-pool(2, 512KiB)", "task-executor(2, 512KiB)", gcd-global]
          - scenario: noop
            strategies: [main, gcd-global, thread(512KiB), operation-queue(4)]
        """

    @Test func aFailingRunAtEightyColumnsFitsEveryLineAndSplitsNoWord() async throws {
        let (result, run, out) = try await StrainBinary.runSuite(Self.failingSuite, environment: ["COLUMNS": "80"],
                                                                 under: FileManager.default.temporaryDirectory)
        defer { try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent) }
        #expect(result.status == 1, "an unexpected overflow fails the run: \(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        #expect(record.trials.contains { $0.outcome.kind == .stackOverflow })

        let lines = result.stdout.components(separatedBy: "\n")
        let wide = lines.filter { $0.count > 80 }
        #expect(wide.isEmpty, "every line fits 80 columns:\n\(wide.joined(separator: "\n"))")

        // The same record rendered with no width: each of its words is printed whole at 80
        // columns, as often. The report is what follows the trial lines, up to "Wrote".
        let whole = TerminalReport(color: false).render(RunReport(OneLine.copy(record)))
        #expect(whole.components(separatedBy: "\n").contains { $0.count > 80 }, "the run has lines to fit")
        let start = try #require(lines.firstIndex(of: ""), "\(result.stdout)")
        let end = try #require(lines.lastIndex { $0.hasPrefix("Wrote ") }, "\(result.stdout)")
        let report = lines[start..<end].joined(separator: "\n")
        // A column moved under its rows is named there (`allocations:`); a column of dashes is
        // left out, its name too.
        var printed = Self.counts(report)
        for table in RunReport(record).outcomes.tables {
            for (column, name) in table.header.enumerated() where table.rows.allSatisfy({ $0.cells[column] == "–" }) {
                for (word, count) in Self.counts(name) { printed[word, default: 0] += count }
            }
        }
        let cut = Self.counts(whole).filter { word, count in word != "–" && printed[word, default: 0] < count }
        #expect(cut.isEmpty, "words cut in two at 80 columns: \(cut.keys.sorted())\n\(report)")
        // Whole between spaces, not only in the counts (which part symbols at their breaks).
        let tokens = Set(report.split(whereSeparator: \.isWhitespace))
        for word in ["stackOverflow", "threads", "thread(512KiB)", "task-executor(2,", "512KiB)"] {
            #expect(tokens.contains(Substring(word)), "\(word) whole:\n\(report)")
        }
    }

    /// How often each word of `text` occurs, a colon after it left out, every template or
    /// generic argument list written `<…>` (as a frame's name too wide to fit is printed).
    static func counts(_ text: String) -> [Substring: Int] {
        TerminalStyle.spacedAtSymbolBreaks(argumentsElided(text)).split(whereSeparator: \.isWhitespace).reduce(into: [:]) { $0[$1.hasSuffix(":") ? $1.dropLast() : $1, default: 0] += 1 }
    }

    /// `text` with each innermost `<…>` list taken out until none is left, then each written `<…>`.
    static func argumentsElided(_ text: String) -> String {
        var text = text
        while let list = text.firstMatch(of: /<[^<>\n]*>/) { text.replaceSubrange(list.range, with: "\u{2039}\u{203A}") }
        return text.replacing("\u{2039}\u{203A}", with: "<…>").replacing(/(<…>)+/, with: "<…>")
    }

    /// A fault in a C++ runtime function whose name is wider than the window: at 80 columns
    /// its template arguments are left out, `<…>`, and said so, where the name was broken
    /// after a `<` across four lines (`swift::TaggedMetadataAllocator<(unsigned short)14>,`,
    /// re-trial 35o, F14); with no width it is whole.
    @Test func aFrameNameTooWideForTheWindowLeavesOutItsTemplateArgumentsNotBreaksThem() throws {
        let symbol = "std::pair<swift::GenericCacheEntry*, bool> swift::StableAddressConcurrentReadableHashMap<swift::GenericCacheEntry, "
            + "swift::TaggedMetadataAllocator<(unsigned short)14>, swift::Mutex>::getOrInsert<swift::MetadataCacheKey, swift::MetadataRequest&>"
        var trial = OutcomeAdviceTests.trial(.crashed, index: 0)
        trial.trace = FaultTrace(signal: 11, faultAddress: 0, isStackOverflow: false, stackLow: nil, stackHigh: nil, guardSizeBytes: nil, totalFrames: 1,
                                 omittedFrames: 0, firstFrames: [Frame(address: 0x10, module: "libswiftCore.so", symbol: symbol)], lastFrames: [],
                                 cycle: nil, markedDepth: nil, walkNanoseconds: 0, captureNanoseconds: nil)
        var run = OutcomeAdviceTests.run()
        run.trials = [trial]
        let narrow = TerminalReport(color: false, columns: 81).render(run)
        #expect(narrow.components(separatedBy: "\n").allSatisfy { $0.count <= 80 }, "\(narrow)")
        let traces = String(narrow[try #require(narrow.range(of: "Traces"), "\(narrow)").lowerBound...])
        #expect(traces.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("std::pair<…> swift::StableAddressConcurrentReadableHashMap<…>::getOrInsert<…>"), "\(traces)")
        #expect(traces.contains("template arguments left out to fit"), "\(traces)")
        // Nor is it broken in the crash's advice: a sentence names it without its arguments in every width.
        #expect(!narrow.contains("TaggedMetadataAllocator"), "\(narrow)")
        let whole = TerminalReport(color: false).render(run)
        let wholeTraces = String(whole[try #require(whole.range(of: "Traces"), "\(whole)").lowerBound...])
        #expect(wholeTraces.contains(symbol) && !wholeTraces.components(separatedBy: "Why, and what to do")[0].contains("<…>"), "\(whole)")
    }

    @Test func aFailingRunOnAnEightyColumnTerminalFitsEveryLineInColourAndSplitsNoWord() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-narrow-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.failingSuite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await CommandRun.run(["run", "suite.yaml", "--out", "out"], in: folder, environment: ["COLUMNS": "80"], removing: ["NO_COLOR"],
                                              terminal: true, timeout: 120)
        #expect(result.status == 1, "\(result.stdout)")
        #expect(result.stdout.contains("\u{1B}[31m"), "in colour: \(result.stdout.debugDescription)")
        // What the terminal shows: each line as its last redraw left it, without escapes.
        let shown = result.stdout.replacing(/\u{1B}\[[0-9;]*[mK]/, with: "").components(separatedBy: "\r\n")
        let drawn = shown.flatMap { $0.components(separatedBy: "\r") }
        let wide = drawn.filter { $0.count > 80 }
        #expect(wide.isEmpty, "every line and every redraw fits 80 columns:\n\(wide.joined(separator: "\n"))")
        let lines = shown.map { $0.components(separatedBy: "\r").last ?? "" }
        let record = try RunRecordFile.read(from: folder + "/out/run.json")
        let whole = TerminalReport(color: false).render(RunReport(OneLine.copy(record)))
        let start = try #require(lines.firstIndex(of: ""), "\(lines.joined(separator: "\n"))")
        let end = try #require(lines.lastIndex { $0.hasPrefix("Wrote ") }, "\(lines.joined(separator: "\n"))")
        var printed = Self.counts(lines[start..<end].joined(separator: "\n"))
        for table in RunReport(record).outcomes.tables {
            for (column, name) in table.header.enumerated() where table.rows.allSatisfy({ $0.cells[column] == "–" }) {
                for (word, count) in Self.counts(name) { printed[word, default: 0] += count }
            }
        }
        let cut = Self.counts(whole).filter { word, count in word != "–" && printed[word, default: 0] < count }
        #expect(cut.isEmpty, "words cut in two on an 80-column terminal: \(cut.keys.sorted())\n\(lines.joined(separator: "\n"))")
    }

    @Test func aBisectAtEightyColumnsFitsEveryLineAndSplitsNoWord() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-narrow-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await StrainBinary.run(["bisect", "stack-depth", "-p", "frame=1KiB", "-p", "limit=100", "--per", "limit", "--high", "1MiB",
                                                 "--repetitions", "1", "--out", folder + "/bisect"], environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let wide = result.stdout.components(separatedBy: "\n").filter { $0.count > 80 }
        #expect(wide.isEmpty, "every line fits 80 columns:\n\(wide.joined(separator: "\n"))")
        let record = try RunRecordFile.read(from: folder + "/bisect/run.json")
        let whole = TerminalReport(color: false).renderBisect(record)
        #expect(whole.components(separatedBy: "\n").contains { $0.count > 80 }, "the bisect has lines to fit")
        let printed = Self.counts(result.stdout)
        let cut = Self.counts(whole).filter { word, count in printed[word, default: 0] < count }
        #expect(cut.isEmpty, "words cut in two at 80 columns: \(cut.keys.sorted())\n\(result.stdout)")
    }

    @Test func listAtEightyColumnsFitsEveryLineAndSplitsNoWord() async throws {
        let listed = try await StrainBinary.run(["list"], environment: ["COLUMNS": "80"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let wide = listed.stdout.components(separatedBy: "\n").filter { $0.count > 80 }
        #expect(wide.isEmpty, "every line fits 80 columns:\n\(wide.joined(separator: "\n"))")

        // Every word of every name, summary and help text (from --json) is printed whole.
        let json = try await StrainBinary.run(["list", "--json"])
        let catalog = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        var texts: [String] = []
        for scenario in catalog["scenarios"] as? [[String: Any]] ?? [] {
            texts += [scenario["name"], scenario["summary"]].compactMap { $0 as? String }
            texts += (scenario["parameters"] as? [[String: Any]] ?? []).flatMap { [$0["name"], $0["help"]].compactMap { $0 as? String } }
        }
        for key in ["strategies", "profiles"] {
            texts += (catalog[key] as? [[String: Any]] ?? []).flatMap { [$0["name"], $0["summary"]].compactMap { $0 as? String } }
        }
        #expect(texts.count > 50, "the catalog has its texts")
        let cut = Set(texts.flatMap { Self.words($0) }).subtracting(Self.words(listed.stdout))
        #expect(cut.isEmpty, "words cut in two at 80 columns: \(cut.sorted())\n\(listed.stdout)")
    }
}

extension NarrowTerminalTests {
    /// The fixture's whole terminal report (tables, traces, stalls, caps, the answer) at 80 columns:
    /// a line wider than the window is a single word too long for any line.
    @Test func theFixturesWholeReportFitsEightyColumnsButForWordsLongerThanALine() throws {
        let run = try ReportTests.fixture()
        let fitted = TerminalReport(color: false, columns: 80).render(RunReport(OneLine.copy(run)))
        let wide = fitted.components(separatedBy: "\n").filter { $0.count > 79 && $0.split(separator: " ").count > 1 }
        #expect(wide.isEmpty, "lines wider than 79 columns with a space to break at:\n\(wide.joined(separator: "\n"))")
        let whole = TerminalReport(color: false).render(RunReport(OneLine.copy(run)))
        #expect(whole.components(separatedBy: "\n").filter { $0.count > 80 }.count > 20, "the fixture has lines to fit")
        // A table's column of dashes is left out at 80 columns, its name too: the words of the
        // tables' names are not counted here (the runs above count them).
        let report = RunReport(OneLine.copy(run))
        let names = Set((report.outcomes.tables.flatMap(\.header) + report.rankings.tables.flatMap(\.header) + report.metrics.tables.flatMap(\.header))
            .flatMap { Self.counts($0).keys })
        let printed = Self.counts(fitted)
        // So is the sentence a ranking's note gives a column of dashes it left out (`p99.9: – where …`).
        var expected = Self.counts(whole)
        for (word, count) in Self.counts(RankingSection.Table.note(shown: ["p99.9"])) { expected[word, default: 0] -= count * report.rankings.tables.count }
        let cut = expected.filter { word, count in word != "–" && !names.contains(word) && printed[word, default: 0] < count }
        #expect(cut.isEmpty, "words cut in two: \(cut.keys.sorted())")
    }
}
