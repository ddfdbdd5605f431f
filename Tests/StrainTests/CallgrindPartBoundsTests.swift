import Foundation
import StrainRecords
import Testing

/// A callgrind part is written inside the trial's process, so the program under test
/// can plant any part it likes: through the built binary, with a stand-in `valgrind`
/// on PATH that writes the part a test gives it where callgrind would, then runs the
/// trial. Each hostile part leaves the trial recorded "not counted: …", the run whole,
/// and no `strain-callgrind-…` folder behind.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CallgrindPartBoundsTests {
    static let suite = """
        name: planted-part
        timeout: 30s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: noop
            strategies: [main]
        """

    /// A part in callgrind's format whose costs are `costs`, one cost line each, under `summary`.
    static func part(summary: String, costs: [String]) -> String {
        (["version: 1", "creator: callgrind-3.19.0", "desc: Trigger: Client Request: strain-work", "positions: line", "events: Ir",
          "summary: \(summary)", "", "ob=/tmp/strain", "fl=/src/main.swift", "fn=work"] + costs.map { "1 \($0)" } + ["totals: 1", ""])
            .joined(separator: "\n")
    }

    /// Runs the suite with `valgrind` standing in: it copies `part` (grown to `size`
    /// bytes, sparse, when given) to where callgrind writes the trial's part, then
    /// executes the trial. Returns the result, the run's record and the temporary
    /// folder's callgrind folders left behind.
    static func run(planting part: String, size: Int? = nil) async throws -> (StrainBinary.Result, RunRecord?, [String]) {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for sub in ["bin", "tmp"] { try FileManager.default.createDirectory(atPath: "\(folder)/\(sub)", withIntermediateDirectories: true) }
        try part.write(toFile: folder + "/part", atomically: true, encoding: .utf8)
        let grow = size.map { "truncate -s \($0) \"$planted\"" } ?? ""
        let valgrind = """
            #!/bin/sh
            # Stands in for valgrind: plants the test's part where callgrind writes this process's, then runs the trial.
            for argument in "$@"; do
              case "$argument" in --callgrind-out-file=*) base="${argument#--callgrind-out-file=}" ;; esac
            done
            while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
            planted="${base%\\%p}$$.1"
            cp "\(folder)/part" "$planted"
            \(grow)
            exec "$@"
            """
        try valgrind.write(toFile: folder + "/bin/valgrind", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder + "/bin/valgrind")
        try suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let path = folder + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        // Spawned: the stand-in knows the pid of the process it becomes, not of a counted server's copy.
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/run", "--format", "json", "--isolation", "spawn"], timeout: 120,
                                          environment: ["PATH": path, "TMPDIR": folder + "/tmp", "STRAIN_INSTRUCTIONS_SOURCE": "callgrind"])
        let record = try? RunRecordFile.read(from: folder + "/run/run.json")
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/tmp")) ?? []).filter { $0.hasPrefix("strain-callgrind-") }
        return (result, record, left)
    }

    @Test func costsThatOverflowWhenAddedLeaveTheTrialNotCountedAndTheRunWhole() async throws {
        let (result, record, left) = try await Self.run(planting: Self.part(summary: "100", costs: ["9223372036854775807", "9223372036854775807"]))
        #expect(result.status == 0, "\(result.status): \(result.stdout)\n\(result.stderr)")
        let trial = try #require(record?.trials.first, "no run.json: \(result.stderr)")
        #expect(trial.metrics.instructions == nil)
        #expect(trial.instructionCount?.notCountable?.hasPrefix("not counted: callgrind output line 11 holds a cost") == true,
                "\(trial.instructionCount as Any)")
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func aNegativeCountIsNotRecorded() async throws {
        let (result, record, left) = try await Self.run(planting: Self.part(summary: "-5", costs: ["-5"]))
        #expect(result.status == 0, "\(result.status): \(result.stdout)\n\(result.stderr)")
        let trial = try #require(record?.trials.first, "no run.json: \(result.stderr)")
        #expect(trial.metrics.instructions == nil, "\(trial.metrics.instructions as Any)")
        #expect(trial.instructionCount?.notCountable?.contains("outside 0 to 2^53") == true, "\(trial.instructionCount as Any)")
        #expect(left.isEmpty, "left behind: \(left)")
    }

    /// A valid head, then zeros to `size` (sparse: it costs no disk): one byte past the cap,
    /// and 16 GiB, which read would outlast the run's 120 s bound by far, so the record
    /// shows it was not read with no clock in the test.
    @Test(arguments: [CallgrindTrialsCap.bytes + 1, 16 << 30])
    func aPartPastTheCapIsNotReadAndSaysSo(size: Int) async throws {
        let (result, record, left) = try await Self.run(planting: Self.part(summary: "100", costs: ["100"]), size: size)
        #expect(result.status == 0, "\(result.status): \(result.stdout)\n\(result.stderr)")
        let trial = try #require(record?.trials.first, "no run.json: \(result.stderr)")
        #expect(trial.metrics.instructions == nil, "\(trial.metrics.instructions as Any)")
        #expect(trial.instructionCount?.notCountable == "not counted: callgrind's part is \(size) bytes, more than the 64 MiB Strain reads as callgrind's part for a trial",
                "\(trial.instructionCount as Any)")
        #expect(left.isEmpty, "left behind: \(left)")
    }
}

/// The cap Limits.md states, spelled here so the test does not read it from the code it tests.
enum CallgrindTrialsCap {
    static let bytes = 64 << 20
}
