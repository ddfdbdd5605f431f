import Foundation
import StrainKit
import Testing

/// `strain report --format csv | benchmark-smaller | benchmark-bigger` on the fixed
/// run.json, through the built binary: what a trend chart or a spreadsheet reads.
@Suite(.timeLimit(.minutes(10))) struct ExportTests {
    static let fixture = ReportTests.fixtures.appendingPathComponent("run.json").path

    static func render(_ format: String) async throws -> String {
        let result = try await StrainBinary.run(["report", fixture, "--format", format, "--out", "-"], timeout: 60)
        #expect(result.status == 0, "\(format): \(result.stderr)")
        return result.stdout
    }

    @Test func theCSVHasARowPerTrialInPlanOrderAndAColumnPerMeasuredMetricWithItsUnit() async throws {
        let record = try RunRecordFile.read(from: Self.fixture)
        let csv = try await Self.render("csv")
        let lines = csv.components(separatedBy: "\r\n")
        #expect(lines.last == "", "every line ends with CRLF")
        #expect(lines.count == record.trials.count + 2, "a header, a row per trial: \(lines.count)")
        let header = lines[0].split(separator: ",").map(String.init)
        #expect(Array(header.prefix(7)) == ["trial", "scenario", "parameters", "strategy", "profile", "repetition", "outcome"])
        #expect(header.contains("wall (s)") && header.contains("stack-high-water (bytes)") && header.contains("frames (count)"), "\(header)")
        #expect(header.contains("archiveBytes (bytes)"), "a scenario's declared metric: \(header)")
        #expect(!header.contains("latency-p999 (ns)") || record.trials.contains { $0.metrics.latency != nil }, "only metrics a trial measured")
        // The first trial: a stack overflow at 3,814 frames on 512 KiB. Its ID holds commas
        // between parameters, so it is quoted.
        let first = lines[1]
        let trial = record.trials[0]
        #expect(first.hasPrefix("\"\(trial.id.description)\",cyclic-graph,\"operation=unarchive, shape=chain, size=2000, players=3, games=4\",thread(512KiB),linux,1,stackOverflow"), "\(first)")
        let cells = Self.cells(first)
        #expect(cells.count == header.count, "every row has every column: \(cells.count) of \(header.count)")
        let frames = try #require(header.firstIndex(of: "frames (count)"))
        #expect(cells[frames] == "3814")
        let stack = try #require(header.firstIndex(of: "stack-high-water (bytes)"))
        #expect(cells[stack] == "524288")
    }

    /// The fields of a CSV line, quotes undone.
    static func cells(_ line: String) -> [String] {
        var cells: [String] = [], field = "", quoted = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" { if characters.first == "\"" { field.append("\""); characters.removeFirst() } else { quoted = false } } else { field.append(character) }
            } else if character == "\"" { quoted = true } else if character == "," { cells.append(field); field = "" } else { field.append(character) }
        }
        return cells + [field]
    }

    @Test func theBenchmarkJSONGivesEachKeysMedianPerMetricSplitByWhichDirectionIsBetter() async throws {
        let record = try RunRecordFile.read(from: Self.fixture)
        for (format, polarity) in [("benchmark-smaller", MetricDescriptor.Polarity.lowerIsBetter), ("benchmark-bigger", .higherIsBetter)] {
            let text = try await Self.render(format)
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], "\(format): \(text)")
            #expect(!entries.isEmpty, "\(format)")
            let names = entries.compactMap { $0["name"] as? String }
            #expect(Set(names).count == names.count, "\(format): one entry per key and metric")
            for entry in entries {
                #expect(entry["value"] is Double && entry["unit"] is String && entry["extra"] is String, "\(format): \(entry)")
                // Metric names may hold spaces (`ns per op`): the longest one the entry's name ends with.
                let name = entry["name"] as? String ?? ""
                let descriptor = (MetricDescriptor.builtIn + (record.customMetrics ?? [])).filter { name.hasSuffix(" " + $0.name) }.max { $0.name.count < $1.name.count }
                #expect(descriptor?.polarity == polarity, "\(format) holds only metrics where \(polarity) is better: \(entry)")
            }
        }
        // One value checked by hand: the median frames of the first key's repetitions.
        let key = record.trials[0].id.key
        let frames = record.trials.filter { $0.id.key == key }.compactMap { $0.metrics.frames }.sorted()
        let bigger = try await #require(try JSONSerialization.jsonObject(with: Data(Self.render("benchmark-bigger").utf8)) as? [[String: Any]])
        let entry = try #require(bigger.first { $0["name"] as? String == "\(key) frames" }, "\(bigger.compactMap { $0["name"] })")
        let median = frames.count % 2 == 1 ? Double(frames[frames.count / 2]) : Double(frames[frames.count / 2 - 1] + frames[frames.count / 2]) / 2
        #expect(!frames.isEmpty && entry["value"] as? Double == median, "\(entry) from \(frames)")
        #expect(entry["unit"] as? String == "count")
        // Written as metrics.csv writes a number: no float's sum error (`0.0005470000000000002`, re-trial 35p, F11).
        let noisy = try await Self.render("benchmark-smaller").split(separator: "\n").filter { line in
            line.contains("\"value\"") && (line.split(separator: ":").last ?? "").filter(\.isNumber).drop { $0 == "0" }.count > 12
        }
        #expect(noisy.isEmpty, "\(noisy)")
    }

    @Test func runWritesTheExportsBesideItsRunWhenAskedFor() async throws {
        let folder = TestFolders.root.appendingPathComponent("strain-export-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "name: export\nruns:\n  - scenario: stack-depth\n    parameters: {limit: 100}\n    strategies: [thread(512KiB)]\n    repetitions: 2\n".write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/out", "--format", "csv", "benchmark-smaller"], timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let csv = try String(contentsOfFile: folder + "/out/metrics.csv", encoding: .utf8)
        #expect(csv.components(separatedBy: "\r\n").count == 4, "a header and two trials: \(csv)")
        let smaller = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/out/benchmark-smaller.json"))) as? [[String: Any]])
        #expect(smaller.contains { ($0["name"] as? String).map { $0.hasPrefix("stack-depth[") && $0.hasSuffix("] thread(512KiB) linux stack-high-water") } == true && ($0["extra"] as? String)?.hasPrefix("median of 2 of 2 repetitions") == true },
                "\(smaller)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/out/report.html"), "only the formats asked for")
    }
}
