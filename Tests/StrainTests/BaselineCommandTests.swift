import Foundation
import StrainRecords
import Testing

/// `strain baseline save|list|show|delete` through the built binary, each in a
/// baseline folder of its own (`--baselines`), never the repository's `Reports/baselines`.
@Suite(.serialized) struct BaselineCommandTests {
    static let suite = """
        name: baseline-cli
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
        """

    /// A new folder with `suite.yaml` (the text given) and the run of it in `NAME/`.
    static func run(_ name: String, suite text: String = suite, in folder: String? = nil) async throws -> (folder: String, run: String, result: StrainBinary.Result) {
        let folder = try folder ?? temporaryFolder()
        let suitePath = folder + "/\(name).yaml"
        try TestFiles.write(text, to: suitePath)
        let out = folder + "/" + name
        let result = try await StrainBinary.run(["run", suitePath, "--out", out, "--format", "json"], timeout: 60)
        return (folder, out, result)
    }

    static func baseline(_ arguments: [String], store: String) async throws -> StrainBinary.Result {
        try await StrainBinary.run(["baseline"] + arguments + ["--baselines", store], timeout: 30)
    }

    @Test func listShowAndDeleteDescribeTheStoredBaselineAndItsRun() async throws {
        let (folder, out, result) = try await Self.run("a")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let store = folder + "/baselines"

        let empty = try await Self.baseline(["list"], store: store)
        #expect(empty.status == 0)
        #expect(empty.stdout == "No baselines in \(store). Save one with `strain baseline save RUN.json --name main`.\n", "\(empty.stdout)")

        let saved = try await Self.baseline(["save", out, "--name", "main"], store: store)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.hasPrefix("Saved baseline main: 1 trial of baseline-cli, commit "), "\(saved.stdout)")
        #expect(saved.stdout.hasSuffix(", to \(store)/main.json\n"), "\(saved.stdout)")
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: store + "/main.json"))) as? [String: Any]
        #expect(file?["name"] as? String == "main")
        #expect(file?["source"] as? String == out)
        #expect(((file?["run"] as? [String: Any])?["trials"] as? [Any])?.count == 1)

        let list = try await Self.baseline(["list"], store: store)
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 1, "one line per baseline: \(list.stdout)")
        #expect(lines.first?.hasPrefix("main  baseline-cli, 1 trial, commit ") == true, "\(list.stdout)")
        #expect(lines.first?.contains(", saved ") == true && lines.first?.contains("calibrated") == false, "\(list.stdout)")

        let show = try await Self.baseline(["show", "main"], store: store)
        #expect(show.status == 0, "\(show.stderr)")
        let shown = show.stdout.split(separator: "\n").map(String.init)
        #expect(shown.count == 5, "\(show.stdout)")
        #expect(shown.first?.hasPrefix("Baseline main, saved ") == true && shown.first?.hasSuffix(" from \(out)") == true, "\(show.stdout)")
        #expect(shown.dropFirst().first?.hasPrefix("  suite baseline-cli (") == true, "\(show.stdout)")
        #expect(shown.dropFirst().first?.contains("), 1 trial, 1 trial key, schema \(RunRecord.currentSchemaVersion), Strain ") == true, "\(show.stdout)")
        #expect(shown.contains { $0.hasPrefix("  machine ") && $0.contains(" cores, ") && $0.contains(" MiB, ") }, "\(show.stdout)")
        // The binary that ran the baseline, which the checkout's commit alone does not name.
        #expect(shown.contains { $0.hasPrefix("  commit ") && $0.contains(", build ") && $0.hasSuffix(" (\(URL(fileURLWithPath: StrainBinary.path).resolvingSymlinksInPath().path))") }, "\(show.stdout)")
        #expect(shown.last == "  not calibrated: cross-run timings are inconclusive until `strain gate --calibrate RUN.json --baseline main`", "\(show.stdout)")

        let deleted = try await Self.baseline(["delete", "main"], store: store)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout == "Deleted baseline main\n")
        #expect(!TestFiles.exists(store + "/main.json"))
        await #expect(try Self.baseline(["list"], store: store).stdout.hasPrefix("No baselines in "))

        let showGone = try await Self.baseline(["show", "main"], store: store)
        #expect(showGone.status == 2)
        #expect(showGone.stderr == "error: no baseline named 'main' in \(store); save one with `strain baseline save RUN.json --name main`\n", "\(showGone.stderr)")
        let deleteGone = try await Self.baseline(["delete", "main"], store: store)
        #expect(deleteGone.status == 2)
        #expect(deleteGone.stderr.contains("no baseline named 'main' in \(store); `strain baseline list` shows them"), "\(deleteGone.stderr)")
    }

    @Test func aBaselineFileListCannotReadIsNamedWithItsReasonNotHidden() async throws {
        let (folder, out, result) = try await Self.run("a")
        #expect(result.status == 0, "\(result.stderr)")
        let store = folder + "/baselines"
        try TestFiles.write("{not json", to: store + "/broken.json")
        let onlyBroken = try await Self.baseline(["list"], store: store)
        #expect(onlyBroken.status == 0)
        #expect(onlyBroken.stdout.hasPrefix("No baselines in \(store)."), "\(onlyBroken.stdout)")
        #expect(onlyBroken.stderr == "warning: not listed: \(store)/broken.json is not a Strain baseline or run.json (not a JSON object with a schema version)\n",
                "\(onlyBroken.stderr)")

        await #expect(try Self.baseline(["save", out, "--name", "main"], store: store).status == 0)
        try TestFiles.write("{\"baselineVersion\": 99, \"run\": {\"schemaVersion\": 4}}", to: store + "/future.json")
        let list = try await Self.baseline(["list"], store: store)
        #expect(list.status == 0)
        #expect(list.stdout.hasPrefix("main  baseline-cli, 1 trial, ") && list.stdout.split(separator: "\n").count == 1, "\(list.stdout)")
        #expect(list.stderr == "warning: not listed: \(store)/broken.json is not a Strain baseline or run.json (not a JSON object with a schema version)\n"
                + "warning: not listed: \(store)/future.json: baseline version 99 is not supported; this Strain reads version 1\n", "\(list.stderr)")
    }

    @Test func aSecondSaveUnderTheSameNameIsRefusedWithoutForceAndLeavesTheFirstIntact() async throws {
        let (folder, first, result) = try await Self.run("first")
        #expect(result.status == 0, "\(result.stderr)")
        let (_, second, again) = try await Self.run("second", in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        let store = folder + "/baselines"
        await #expect(try Self.baseline(["save", first, "--name", "main"], store: store).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store + "/main.json"))

        let refused = try await Self.baseline(["save", second, "--name", "main"], store: store)
        #expect(refused.status == 2)
        #expect(refused.stderr == "error: baseline 'main' exists already (\(store)/main.json); pass --force to replace it, or choose another --name\n", "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/main.json")) == before, "the refused save left the baseline as it was")

        let forced = try await Self.baseline(["save", second, "--name", "main", "--force"], store: store)
        #expect(forced.status == 0, "\(forced.stderr)")
        let show = try await Self.baseline(["show", "main"], store: store)
        #expect(show.stdout.split(separator: "\n").first?.hasSuffix(" from \(second)") == true, "the forced save replaced it: \(show.stdout)")
        #expect(TestFiles.entries(store).filter { !$0.hasPrefix(".") } == ["main.json"])
    }

    @Test func aRunWithAHarnessErrorIsRefusedAsABaselineUnlessForced() async throws {
        // A memory limit that leaves no room for the trial's preparation thread: a harness error at once (the Limits article, StrainCLI.docc).
        let (folder, out, result) = try await Self.run("broken", suite: """
            name: baseline-broken
            timeout: 30s
            profiles: [linux]
            runs:
              - scenario: noop
                strategies: [main]
              - scenario: noop
                strategies: [thread(512KiB)]
                memory-limit: 64MiB
            """)
        #expect(result.status == 3, "\(result.stdout)\(result.stderr)")
        let store = folder + "/baselines"
        let refused = try await Self.baseline(["save", out, "--name", "main"], store: store)
        #expect(refused.status == 2)
        #expect(refused.stderr == "error: \(out) has 1 trial where the harness failed (noop thread(512KiB) linux #1); a baseline without their data would hide regressions. Run it again, or pass --force\n",
                "\(refused.stderr)")
        #expect(!TestFiles.exists(store + "/main.json"))

        let forced = try await Self.baseline(["save", out, "--name", "main", "--force"], store: store)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.hasPrefix("Saved baseline main: 2 trials of baseline-broken"), "\(forced.stdout)")
    }

    @Test func aNameThatIsNotAPlainFileNameIsRefusedAndNothingIsWritten() async throws {
        let (folder, out, result) = try await Self.run("a")
        #expect(result.status == 0, "\(result.stderr)")
        let store = folder + "/baselines"
        for name in ["../escape", ".hidden", "-dash", "two words", String(repeating: "x", count: 101), "main/x"] {
            let refused = try await Self.baseline(["save", out, "--name=\(name)"], store: store)
            #expect(refused.status == 2, "'\(name)': \(refused.stdout)")
            #expect(refused.stderr == "error: baseline name '\(name)' is not valid; use 1 to 100 letters, digits, '.', '_' or '-', not starting with '.' or '-' (e.g. main)\n",
                    "'\(name)': \(refused.stderr)")
        }
        let empty = try await Self.baseline(["save", out, "--name="], store: store)
        #expect(empty.status == 2 && empty.stderr.contains("--name"), "\(empty.stderr)")
        #expect(TestFiles.entries(store).isEmpty, "\(TestFiles.entries(store))")
        #expect(TestFiles.entries(folder).sorted() == ["a", "a.yaml"], "nothing was written beside the store either: \(TestFiles.entries(folder))")
        let longest = String(repeating: "x", count: 100)
        await #expect(try Self.baseline(["save", out, "--name", longest], store: store).status == 0, "100 characters are allowed")
        await #expect(try Self.baseline(["delete", "../a/run"], store: store).status == 2)
        #expect(TestFiles.exists(out + "/run.json"), "delete never leaves the store")
    }
}
