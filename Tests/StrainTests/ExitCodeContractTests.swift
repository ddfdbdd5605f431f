import Foundation
import StrainCLI
import Testing

/// One exit-code contract, written once (`ExitCodeContract`), in every place a user
/// meets it: `strain --help`, `run --help`, `gate --help`, `bisect --help`, the man
/// page's EXIT STATUS and the ExitCodes article; the README names each code.
@Suite(.timeLimit(.minutes(60))) struct ExitCodeContractTests {
    /// Help text is wrapped to the terminal by argument-parser: compared with runs of
    /// white space made one space.
    static func flattened(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
    }

    @Test func everyHelpPageThatNamesExitCodesPrintsTheContractsOwnLines() async throws {
        let pages: [(arguments: [String], expected: String)] = [
            (["--help"], ExitCodeContract.help(for: .all)),
            (["run", "--help"], ExitCodeContract.help(for: .run)),
            (["gate", "--help"], ExitCodeContract.help(for: .gate)),
            // A section of its own, as run's and gate's are (it was a sentence in the discussion).
            (["bisect", "--help"], "Exit codes (as in `strain --help`): " + ExitCodeContract.otherCommands[0]),
            // Each command with codes of its own says them on its page (report, list, explain and baseline said none: re-trial 35p, F5).
            (["report", "--help"], ExitCodeContract.section(for: "report")),
            (["list", "--help"], ExitCodeContract.section(for: "list")),
            (["explain", "--help"], ExitCodeContract.section(for: "list")),
            (["baseline", "--help"], ExitCodeContract.section(for: "baseline")),
        ]
        for command in ["report", "list", "baseline"] { #expect(ExitCodeContract.section(for: command).count > 60, "the contract has a sentence for \(command)") }
        for page in pages {
            let help = try await StrainBinary.run(page.arguments, timeout: 60)
            #expect(help.status == 0, "strain \(page.arguments.joined(separator: " ")): \(help.stderr)")
            #expect(Self.flattened(help.stdout).contains(Self.flattened(page.expected)),
                    "strain \(page.arguments.joined(separator: " ")) does not print the contract:\n\(page.expected)\n--- it printed:\n\(help.stdout)")
        }
        let bisect = try await StrainBinary.run(["bisect", "--help"], timeout: 60).stdout
        if let usage = bisect.range(of: "USAGE: "), let codes = bisect.range(of: "Exit codes (") {
            #expect(usage.lowerBound < codes.lowerBound, "bisect's exit codes come after its usage, as run's do: \(bisect)")
        }
        // Every code is in the root help, the gate's only where the gate exits so.
        let root = try await StrainBinary.run(["--help"], timeout: 60)
        for row in ExitCodeContract.rows {
            #expect(root.stdout.contains("\n  \(row.code) "), "strain --help lists no exit code \(row.code)")
        }
        #expect(ExitCodeContract.rows.map(\.code) == [0, 1, 2, 3, 4, 130, 131, 143])
    }

    /// `run --help` and `gate --help` give each code the reasons of that command: code 2
    /// named `baseline`'s `--force` and `merge`'s shards there, code 3 `merge`'s missing
    /// shard (re-trial 35o, F12); `strain --help` keeps every command's.
    @Test func runsAndTheGatesHelpGiveOnlyTheirOwnReasonsForACode() async throws {
        for command in ["run", "gate"] {
            let help = try await StrainBinary.run([command, "--help"], timeout: 60)
            let rest = help.stdout[try #require(help.stdout.range(of: "Exit codes ("), "\(help.stdout)").lowerBound...]
            let codes = Self.flattened(String(rest).components(separatedBy: "\nOPTIONS:")[0].components(separatedBy: "\nUSAGE:")[0])
            for other in ["--force", "shards", "`merge`"] {
                #expect(!codes.contains(other), "\(command) --help: \(other) is another command's:\n\(codes)")
            }
            // The gate has no --resume: its code 2 named one (re-trial 35q, F11).
            #expect(codes.contains("a `--resume` of another plan") == (command == "run"), "\(command) --help: \(codes)")
        }
        let root = Self.flattened(try await StrainBinary.run(["--help"], timeout: 60).stdout)
        #expect(root.contains("an existing baseline without `--force`, shards of different plans") && root.contains("`merge`: a shard or trial missing"), "\(root)")
    }

    /// `report` renders a run; its outcomes were the run's to say. A report of a run with
    /// unexpected trials exits 0, and the contract says so (a re-trial found the table
    /// putting `report` beside `run`, whose 1 it never used).
    @Test func aReportOfARunWithUnexpectedOutcomesExitsZeroAsTheContractSays() async throws {
        let record = try ReportTests.fixture()
        #expect(record.trials.contains { !$0.expected }, "the fixture has unexpected trials")
        let report = try await StrainBinary.run(["report", ReportTests.fixturePath, "--format", "md", "--out", "-"], timeout: 60)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(!report.stdout.isEmpty)
        let help = try await StrainBinary.run(["--help"], timeout: 60)
        #expect(Self.flattened(help.stdout).contains("`report` uses 0 once the report is written"), "\(help.stdout)")
        #expect(!help.stdout.contains("run, report, merge, baseline"), "\(help.stdout)")
    }

    /// The README, read in five minutes, names every code in a sentence and links the
    /// article that holds the table (the table and its notes were 500 of its 1,970 words:
    /// re-trial 35p, F4).
    @Test func theREADMENamesEveryCodeAndLinksTheArticleThatHoldsTheTable() throws {
        let text = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent("README.md").path, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## ").first { $0.hasPrefix("Exit codes\n") }, "README.md has an Exit codes section")
        for row in ExitCodeContract.rows { #expect(section.contains("**\(row.code)**"), "README.md's Exit codes names \(row.code):\n\(section)") }
        #expect(section.contains("](Sources/StrainCLI/StrainCLI.docc/ExitCodes.md)"), "\(section)")
        #expect(!text.contains("exit-codes:begin"), "the table is the article's, not the README's")
    }

    @Test func theExitCodesArticleHoldsTheContractsTableVerbatim() throws {
        let table = ExitCodeContract.markdown()
        for file in ["Sources/StrainCLI/StrainCLI.docc/ExitCodes.md"] {
            let text = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent(file).path, encoding: .utf8)
            let begin = try #require(text.range(of: "<!-- exit-codes:begin"), "\(file) has no exit-codes:begin marker")
            let afterMarker = try #require(text[begin.upperBound...].range(of: "-->\n"), "\(file): the begin marker is not closed")
            let end = try #require(text.range(of: "\n<!-- exit-codes:end -->"), "\(file) has no exit-codes:end marker")
            let block = String(text[afterMarker.upperBound..<end.lowerBound])
            #expect(block == table, "\(file)'s exit-code table is not the contract's; paste `strain _exit-codes markdown` between its markers:\n\(table)")
        }
        // The binary prints the same table, for pasting.
    }

    @Test func theBinaryPrintsTheContractForTheManPageAndTheDocs() async throws {
        let markdown = try await StrainBinary.run(["_exit-codes", "markdown"], timeout: 60)
        #expect(markdown.status == 0 && markdown.stdout == ExitCodeContract.markdown() + "\n", "\(markdown.stdout)\(markdown.stderr)")
        let mdoc = try await StrainBinary.run(["_exit-codes", "mdoc"], timeout: 60)
        #expect(mdoc.status == 0 && mdoc.stdout == ExitCodeContract.mdoc() + "\n", "\(mdoc.stdout)\(mdoc.stderr)")
        let wrong = try await StrainBinary.run(["_exit-codes", "html"], timeout: 60)
        #expect(wrong.status == 2 && wrong.stderr.contains("write markdown, mdoc or text"), "\(wrong.stderr)")
    }

    /// `.ci/manual` on the tests' strain: argument-parser's page with Strain's EXIT STATUS.
    static func manualPage() async throws -> String {
        let repository = FixturePackage.repository.path
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let made = try await FixturePackage.locked(scratch: repository + "/.build/generate-manual") {
            try await FixturePackage.compiling {
                try await BoundedProcess.run("/bin/bash", [repository + "/.ci/manual", StrainBinary.path, out],
                                             directory: repository, timeout: 1200, mergingOutput: true)
            }
        }
        try #require(made.status == 0, ".ci/manual: \(made.stdout)")
        return try String(contentsOfFile: out + "/strain.1", encoding: .utf8)
    }

    @Test func theManPagesExitStatusIsTheContractNotArgumentParsersGenericLine() async throws {
        let page = try await Self.manualPage()
        let status = try #require(page.range(of: ".Sh \"EXIT STATUS\"\n"), "no EXIT STATUS in the page")
        let section = String(page[status.lowerBound...])
        #expect(section == ExitCodeContract.mdoc() + "\n", "the page's EXIT STATUS is not the contract's:\n\(section)")
        #expect(!page.contains(".Ex -std"), "argument-parser's generic \"0 on success, >0 if an error occurs\" is still there")
        for row in ExitCodeContract.rows { #expect(section.contains(".It \(row.code)\n"), "EXIT STATUS lists no \(row.code)") }
    }

    static let mandoc = ["/usr/bin/mandoc", "/usr/local/bin/mandoc"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The page's DESCRIPTION repeated the help's exit-code table, pre-wrapped at 78
    /// columns and indented, which mdoc takes as literal lines: it rendered ragged (a
    /// line of `suite`, another of `expects`), ran `143 … as for 130` into the notes
    /// under it, and generate-manual's ASCII-only escaping printed `strain …` as
    /// ``strain ` ``. The help's tables now point to EXIT STATUS, the one list of the codes.
    @Test(.enabled(if: mandoc != nil, "mandoc is not installed, so the man page is not rendered: apt-get install mandoc (.ci/setup installs it)"))
    func theManPageListsTheExitCodesOnceAndItsTextIsFilledNotPreWrapped() async throws {
        let page = try await Self.manualPage()
        #expect(!page.contains("Exit codes ("), "a help's exit-code table is still in the page")
        let tableLine = try Regex(#"\n  (0|1|2|3|4|130|131|143) +[a-z`]"#)
        #expect(page.firstMatch(of: tableLine) == nil, "a pre-wrapped table row: \(page.firstMatch(of: tableLine).map { String(page[$0.range]) } ?? "")")
        // `run` and `gate` point there; the root's help prints its table after USAGE, outside the page's text.
        #expect(page.components(separatedBy: "\n.Sx \"EXIT STATUS\" .\n").count - 1 >= 2, "run and gate point to EXIT STATUS")
        let file = try temporaryFolder() + "/strain.1"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try page.write(toFile: file, atomically: true, encoding: .utf8)
        let rendered = try await BoundedProcess.run(try #require(Self.mandoc), ["-T", "utf8", "-O", "width=80", file], timeout: 60)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let text = rendered.stdout.replacingOccurrences(of: #".\x{08}"#, with: "", options: .regularExpression)
        #expect(!text.contains("strain `") && text.contains("swift package strain ..."), "\(text.suffix(1_500))")
        let flattened = Self.flattened(text)
        #expect(!flattened.contains("as for 130 bisect") && !flattened.contains("as for 130 `bisect`"), "the notes run into the table's last row")
        // No line of one or two short words in the middle of filled text (`its`, `suite`, a lone `or`).
        let lines = text.components(separatedBy: "\n")
        let orphans = lines.indices.dropFirst().dropLast().filter { index in
            let words = lines[index].split(whereSeparator: \.isWhitespace)
            return (1...2).contains(words.count) && words.allSatisfy { $0.count <= 7 && $0.allSatisfy(\.isLetter) }
                && !lines[index - 1].trimmingCharacters(in: .whitespaces).isEmpty && !lines[index + 1].trimmingCharacters(in: .whitespaces).isEmpty
                && lines[index - 1].count > 70
        }
        #expect(orphans.isEmpty, "ragged lines: \(orphans.map { "\(lines[$0 - 1])⏎\(lines[$0])" })")
        // mdoc ends a sentence at a period that ends a source line: `e.g.` there printed `e.g.  to` (re-trial 35p, F9).
        let gaps = lines.filter { $0.trimmingCharacters(in: .whitespaces).contains(#/\b(e\.g|i\.e|etc|vs)\.  /#) }
        #expect(gaps.isEmpty, "a sentence's gap after an abbreviation: \(gaps)")
    }

    @Test(.enabled(if: mandoc != nil, "mandoc is not installed, so the man page is not linted: apt-get install mandoc (.ci/setup installs it)"))
    func theManPageRendersWithNoMandocWarning() async throws {
        let page = try await Self.manualPage()
        let file = try temporaryFolder() + "/strain.1"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try page.write(toFile: file, atomically: true, encoding: .utf8)
        let lint = try await BoundedProcess.run(try #require(Self.mandoc), ["-T", "lint", "-W", "warning", file], timeout: 60, mergingOutput: true)
        #expect(lint.status == 0 && lint.stdout.isEmpty, "mandoc -T lint -W warning:\n\(lint.stdout)")
        // Its style notes too, but the footer's `.Os Linux`, which .ci/manual sets on purpose
        // (an EXIT STATUS of lines up to 212 bytes made 11 of them).
        let style = try await BoundedProcess.run(try #require(Self.mandoc), ["-T", "lint", "-W", "style", file], timeout: 60, mergingOutput: true)
        let notes = style.stdout.split(separator: "\n").filter { !$0.contains("Os Linux") }
        #expect(notes.isEmpty, "mandoc -T lint -W style:\n\(notes.joined(separator: "\n"))")
        // groff's mdoc package says the same (blank lines in fill mode were its warnings).
        let groff = try await BoundedProcess.run("/usr/bin/env", ["groff", "-mdoc", "-ww", "-z", file], timeout: 60, mergingOutput: true)
        #expect(groff.status == 0 && groff.stdout.isEmpty, "groff -mdoc -ww:\n\(groff.stdout)")
    }

    /// groff, which `man` uses, rendered the page as "BSD General Commands Manual" with
    /// "BSD" in its footer, hyphenated words and file names at line ends (`ju‐nit.xml`,
    /// `base‐line/report.html`), and printed the help's backticks as they are.
    static let groff = ["/usr/bin/groff", "/usr/local/bin/groff"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: groff != nil, "groff is not installed, so the man page is not rendered as man renders it: apt-get install groff-base (man-db brings it)"))
    func theManPageAsManRendersItAt80ColumnsNamesLinuxAndBreaksNoWord() async throws {
        let page = try await Self.manualPage()
        let file = try temporaryFolder() + "/strain.1"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try page.write(toFile: file, atomically: true, encoding: .utf8)
        let rendered = try await BoundedProcess.run(try #require(Self.groff), ["-T", "utf8", "-mdoc", "-rLL=78n", "-P", "-c", file],
                                                    environment: ["LC_ALL": "C.UTF-8"], timeout: 60)
        let lines = rendered.stdout.replacingOccurrences(of: #".\x{08}"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: "\u{2010}", with: "-").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count > 100, "\(rendered.stdout.prefix(2_000))")
        #expect(lines.first?.contains("Linux General Commands Manual") == true, "\(lines.first ?? "")")
        #expect(!lines.contains { $0.contains("BSD") }, "\(lines.filter { $0.contains("BSD") })")
        #expect(!lines.contains { $0.contains("`") }, "\(lines.filter { $0.contains("`") }.prefix(5))")
        // No line ends inside a word, not even at the word's own hyphen: `benchmark-` then
        // `bigger.json` read as a hyphenated `benchmarkbigger.json` (re-trial 35m).
        let split = zip(lines, lines.dropFirst()).filter { $0.0.hasSuffix("-") && !$0.0.hasSuffix(" -") }
        #expect(split.isEmpty, "words split at a hyphen: \(split.prefix(5).map { "\($0.0.suffix(30)) / \($0.1.prefix(30))" })")
        #expect(lines.contains { $0.contains("benchmark-bigger.json") }, "the file name whole on its line")
    }

    /// generate-manual drops every character outside ASCII: `1 ≤ K ≤ N ≤ 1000` came
    /// out as `1  K  N  1000`. Every one the help holds reaches the rendered page.
    @Test(.enabled(if: mandoc != nil, "mandoc is not installed, so the man page is not rendered: apt-get install mandoc (.ci/setup installs it)"))
    func theManPageKeepsEveryCharacterOfTheHelpOutsideASCII() async throws {
        let dump = try await StrainBinary.run(["--experimental-dump-help"])
        let characters = Set(dump.stdout.filter { !$0.isASCII })
        try #require(!characters.isEmpty, "the help has no character outside ASCII to check")
        let page = try await Self.manualPage()
        let file = try temporaryFolder() + "/strain.1"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try page.write(toFile: file, atomically: true, encoding: .utf8)
        let rendered = try await BoundedProcess.run(try #require(Self.mandoc), ["-T", "utf8", "-O", "width=80", file], timeout: 60)
        let text = rendered.stdout.replacingOccurrences(of: #".\x{08}"#, with: "", options: .regularExpression)
        for character in characters.sorted() { #expect(text.contains(character), "\(character) is missing from the rendered page") }
        #expect(Self.flattened(text).contains("Run shard K of N (1 ≤ K ≤ N ≤ 1000)"), "\(text.prefix(3_000))")
    }
}
