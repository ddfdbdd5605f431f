import Foundation
import StrainRecords

extension GateReport {
    /// GitHub shows at most this many error annotations per step.
    public static let annotationLimit = 10
    /// GitHub uploads a step summary up to 1 MiB.
    public static let stepSummaryLimit = 1 << 20

    /// Workflow commands: `::error` for the worst ten failing rows, each at its suite
    /// file's line, then one `::notice` with the count of the rest and the conclusion.
    public func renderGitHub() -> String {
        var lines: [String] = []
        let failing = self.failing
        for row in failing.prefix(Self.annotationLimit) {
            var properties = ["file=\(Self.property(suitePath))"]
            if let line = row.suiteLine { properties.append("line=\(line)") }
            properties.append("title=\(Self.property("Strain gate: \(row.verdict.label) \(row.key)"))")
            var message = row.outcomeReason.map { "outcome: \($0)" } ?? ""
            for metric in row.metrics where metric.verdict.fails {
                message += (message.isEmpty ? "" : "\n") + "\(metric.metric): \(metric.reason)\(Self.statistics(metric))"
            }
            lines.append("::error \(properties.joined(separator: ","))::\(Self.data(String(message.prefix(4000))))")
        }
        if failing.count > Self.annotationLimit {
            lines.append("::notice title=Strain gate::\(Self.data("\(failing.count - Self.annotationLimit) more failing rows: see gate.json or the step summary"))")
        }
        lines.append("::notice title=Strain gate::\(Self.data(conclusion))")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Escapes a workflow command's message: `%`, CR and LF.
    public static func data(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    /// Escapes a workflow command's property value: as `data`, plus `:` and `,`.
    public static func property(_ text: String) -> String {
        data(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    /// Appends the Markdown comparison to `$GITHUB_STEP_SUMMARY`, cut under its 1 MiB limit.
    public func appendStepSummary(to path: String) throws {
        let held = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        let text = renderMarkdown(limit: max(4096, Self.stepSummaryLimit - 1024 - held))
        guard let handle = FileHandle(forWritingAtPath: path) else {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return
        }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
