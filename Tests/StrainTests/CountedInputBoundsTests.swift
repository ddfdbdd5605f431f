import Foundation
import Testing

/// Counted inputs in a run.json (allocation sites' counts, instruction counts), read by
/// `strain report` and `strain gate` through the built binary: out of range, or summing
/// past what a trial's count can hold, each is refused with its field's path (exit 2),
/// never trapped on.
@Suite struct CountedInputBoundsTests {
    /// The fixture's `noop` trial, completed once.
    static let noop = 19
    /// The fixture's two completed repetitions of one `stack-depth` row: a counted metric
    /// needs two baseline repetitions that agree before the gate calls it regressed.
    static let row = 4...5

    /// The fixture with the row's allocations and sites set, written to a new folder under `folder`.
    static func record(in folder: String, name: String, allocations: Int, sites: [[String: Any]]) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: RecordBoundsTests.fixture))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var trials = object["trials"] as! [[String: Any]]
        for index in row {
            var metrics = trials[index]["metrics"] as! [String: Any]
            metrics["allocations"] = allocations
            metrics["allocatedBytes"] = allocations * 16
            trials[index]["metrics"] = metrics
            trials[index]["allocationSites"] = sites
        }
        object["trials"] = trials
        let path = (folder as NSString).appendingPathComponent("\(name).json")
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func site(_ allocations: Int, bytes: Int = 1) -> [String: Any] {
        ["frame": ["address": 4096, "symbol": "Order.init(from:)", "file": "/src/Order.swift", "line": 42] as [String: Any],
         "allocations": allocations, "bytes": bytes]
    }

    /// The fixture with `change` applied to the `noop` trial's JSON object.
    static func trial(in folder: String, _ change: (inout [String: Any]) -> Void) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: RecordBoundsTests.fixture))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var trials = object["trials"] as! [[String: Any]]
        change(&trials[noop])
        object["trials"] = trials
        let path = (folder as NSString).appendingPathComponent("changed.json")
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aSiteCountOfIntMaxIsRefusedByReportAndGateWithItsFieldNotTrappedOn() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let baseline = try Self.record(in: folder, name: "baseline", allocations: 100, sites: [Self.site(100)])
        // A regression of allocations, so the gate names the sites that grew: the one at Int.max.
        let candidate = try Self.record(in: folder, name: "candidate", allocations: 100_000, sites: [Self.site(Int.max)])
        let field = "trials[\(Self.row.lowerBound)].allocationSites[0].allocations is \(Int.max)"
        let gate = try await RecordBoundsTests.bounded(["gate", candidate, "--baseline", baseline, "--out", folder + "/gate"])
        #expect(gate.status == 2, "\(gate.status): \(gate.stdout)\n\(gate.stderr)")
        #expect(gate.stderr.contains("\(candidate): has a number out of range: \(field)"), "\(gate.stderr)")
        let report = try await RecordBoundsTests.bounded(["report", candidate, "--format", "md", "--out", "-"])
        #expect(report.status == 2, "\(report.status): \(report.stderr)")
        #expect(report.stderr.contains(field), "\(report.stderr)")
    }

    @Test func sitesWhoseCountsSumPastTwoToThe53AreRefusedNamingTheSiteThatPassedIt() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let baseline = try Self.record(in: folder, name: "baseline", allocations: 100, sites: [Self.site(100)])
        // 2,000 copies of one site at 2^53 each: every count in range, their sum not.
        let candidate = try Self.record(in: folder, name: "candidate", allocations: 100_000, sites: Array(repeating: Self.site(1 << 53), count: 2_000))
        let gate = try await RecordBoundsTests.bounded(["gate", candidate, "--baseline", baseline, "--out", folder + "/gate"])
        #expect(gate.status == 2, "\(gate.status): \(gate.stdout)\n\(gate.stderr)")
        #expect(gate.stderr.contains("trials[\(Self.row.lowerBound)].allocationSites[1].allocations is \(1 << 53)"), "\(gate.stderr)")
        #expect(gate.stderr.contains("within 0 to \(1 << 53) (2^53) in all"), "\(gate.stderr)")
        let report = try await RecordBoundsTests.bounded(["report", candidate, "--format", "text", "--out", "-"])
        #expect(report.status == 2, "\(report.status): \(report.stderr)")
    }

    @Test(arguments: [("metrics", "instructions"), ("metrics", "allocations"), ("instructionCount", "instructions")])
    func aNegativeCountIsRefusedLikeANegativeTrialSeconds(place: String, key: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try Self.trial(in: folder) { trial in
            var object = trial[place] as? [String: Any] ?? ["source": "callgrind"]
            object[key] = -5
            trial[place] = object
        }
        let field = "trials[\(Self.noop)].\(place).\(key) is -5; a valid value is a whole number from 0 to \(1 << 53)"
        let report = try await RecordBoundsTests.bounded(["report", path, "--format", "md", "--out", "-"])
        #expect(report.status == 2, "\(report.status): \(report.stderr)")
        #expect(report.stderr.contains(field), "\(report.stderr)")
        let gate = try await RecordBoundsTests.bounded(["gate", path, "--baseline", RecordBoundsTests.fixture, "--out", folder + "/gate"])
        #expect(gate.status == 2, "\(gate.status): \(gate.stderr)")
        #expect(gate.stderr.contains(field), "\(gate.stderr)")
    }
}
