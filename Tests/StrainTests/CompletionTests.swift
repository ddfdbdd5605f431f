import Foundation
import StrainKit
import StrainScenarios
import Testing

/// `strain explain <TAB>` and `strain bisect <TAB>` complete the catalog's scenario
/// names, in the scripts the binary generates (and the bundle ships).
@Suite(.timeLimit(.minutes(10))) struct CompletionTests {
    static let names = ScenarioCatalog.builtIn.names

    /// What bash offers after `strain WORDS`, through the generated script's own function.
    static func bashCompletes(_ words: [String], script: String) async throws -> [String] {
        let folder = TestFolders.root.appendingPathComponent("strain-completion-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try script.write(toFile: folder + "/strain.bash", atomically: true, encoding: .utf8)
        let line = (["strain"] + words).joined(separator: " ")
        let quoted = (["strain"] + words).map { "'\($0)'" }.joined(separator: " ")
        let probe = """
        source \(folder)/strain.bash
        COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
        _strain strain '\(words.last ?? "")' '\(words.dropLast().last ?? "strain")' 2>/dev/null
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let ended = try await BoundedProcess.run("/bin/bash", ["--norc", "--noprofile", "-c", probe], timeout: 60)
        #expect(ended.status == 0, "\(ended.stderr)")
        return ended.stdout.split(separator: "\n").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test func bashCompletesScenarioNamesAfterExplainAndBisect() async throws {
        #expect(Self.names.count >= 15)
        let generated = try await StrainBinary.run(["--generate-completion-script", "bash"])
        try #require(generated.status == 0, "\(generated.stderr)")
        for command in ["explain", "bisect"] {
            #expect(Set(try await Self.bashCompletes([command, ""], script: generated.stdout)).isSuperset(of: Self.names),
                    "strain \(command) <TAB> offers every scenario")
            let cyclic = try await Self.bashCompletes([command, "cyc"], script: generated.stdout)
            #expect(cyclic == ["cyclic-graph"], "strain \(command) cyc<TAB>: \(cyclic)")
        }
    }

    /// `--profile <TAB>` offers the profiles the help names (it offered nothing: re-trial 35n, F7).
    @Test func bashCompletesTheProfilesAfterBisectsAndExecsProfileOption() async throws {
        let generated = try await StrainBinary.run(["--generate-completion-script", "bash"])
        try #require(generated.status == 0, "\(generated.stderr)")
        for words in [["bisect", "cyclic-graph", "--profile", ""], ["exec", "--profile", ""]] {
            let offered = try await Self.bashCompletes(words, script: generated.stdout)
            #expect(Set(offered) == ["linux", "ios", "macos"], "strain \(words.joined(separator: " "))<TAB>: \(offered)")
        }
    }

    /// `bisect --strategy <TAB>` offers the strategies, parentheses and all, typed into a real
    /// interactive bash, zsh and fish on a pseudo-terminal (`Fixtures/completion/tab.py`): each lists
    /// them and inserts the one a prefix picks quoted as the shell needs. A listed value went
    /// into fish's script as `-a 'thread(512KiB) …'`, whose parentheses fish ran as a command
    /// (`512KiB`); the scripts now ask the binary, by the name `strain`, for them.
    @Test(arguments: ["bash", "zsh", "fish"])
    func aShellCompletesTheStrategiesAndQuotesTheirParentheses(shell: String) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)") else {
            Issue.record("no /usr/bin/\(shell): .ci/setup installs it (Debian: \(shell)) to check its completion script")
            return
        }
        let folder = TestFolders.root.appendingPathComponent("strain-completion-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/strain", withDestinationPath: StrainBinary.path)
        let generated = try await StrainBinary.run(["--generate-completion-script", shell])
        try #require(generated.status == 0, "\(generated.stderr)")
        let script = folder + (shell == "zsh" ? "/_strain" : "/strain.\(shell)")
        try generated.stdout.write(toFile: script, atomically: true, encoding: .utf8)
        let tab = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/completion/tab.py").path
        func typed(_ line: String) async throws -> String {
            let ended = try await BoundedProcess.run("/usr/bin/env", ["python3", tab, shell, script, folder, line], timeout: 120)
            #expect(ended.status == 0 && !ended.stdout.contains("Unknown command"), "\(ended.stdout)\n\(ended.stderr)")
            return ended.stdout
        }
        let listed = try await typed("strain bisect cyclic-graph --strategy ")
        for strategy in ["thread(512KiB)", "thread-pool(64, 512KiB)", "gcd-global", "task", "main"] {
            #expect(listed.contains(strategy), "\(shell) lists \(strategy): \(listed)")
        }
        // Inserted quoted: bash's `thread-pool\(64\,\ 512KiB\)`, zsh's and fish's `thread-pool\(64,\ 512KiB\)`.
        let picked = try await typed("strain bisect cyclic-graph --strategy thread-p")
        #expect(picked.contains("--strategy thread-pool\\(64") && picked.contains("512KiB\\)"), "\(shell): \(picked)")
    }

    @Test func zshAndFishScriptsListTheScenarioNamesForExplainAndBisect() async throws {
        // A line that lists every scenario: fish's `complete … "strain explain"` line,
        // zsh's array of values for the command's argument.
        func listsAll(_ line: Substring) -> Bool { Self.names.allSatisfy { line.contains("'\($0)'") || line.contains(" \($0) ") || line.contains("'\($0) ") || line.contains(" \($0)'") } }
        let fish = try await StrainBinary.run(["--generate-completion-script", "fish"])
        try #require(fish.status == 0, "\(fish.stderr)")
        for command in ["explain", "bisect"] {
            let lines = fish.stdout.split(separator: "\n").filter { $0.contains("\"strain \(command)\"") && listsAll($0) }
            #expect(lines.count == 1, "fish: strain \(command)'s argument lists every scenario")
        }
        let zsh = try await StrainBinary.run(["--generate-completion-script", "zsh"])
        try #require(zsh.status == 0, "\(zsh.stderr)")
        #expect(zsh.stdout.split(separator: "\n").filter(listsAll).count == 2, "zsh: explain's and bisect's arguments list every scenario")
    }
}
