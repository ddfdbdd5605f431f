import Foundation
import StrainRecords

/// `junit.xml`: one test case per trial, grouped in a test suite per scenario,
/// in the shape Jenkins, GitLab and GitHub's test-report actions read. A trial
/// whose outcome the suite did not expect is a failure (a harness error is an
/// error), with the outcome and the head of its trace; the child's output goes
/// to system-out and system-err.
package enum JUnitReport {
    package static func render(_ run: RunRecord) -> String {
        let scenarios = run.trials.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let failures = run.trials.filter { !$0.expected && $0.outcome.kind != .harnessError }.count
        let errors = run.trials.filter { !$0.expected && $0.outcome.kind == .harnessError }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"\(a("strain: " + run.suite.name))\" tests=\"\(run.trials.count)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"\(seconds(run.trials.compactMap(\.metrics.trialSeconds).reduce(0, +)))\">\n"
        for (index, scenario) in scenarios.enumerated() {
            let trials = run.trials.filter { $0.scenario == scenario }
            let suiteFailures = trials.filter { !$0.expected && $0.outcome.kind != .harnessError }.count
            let suiteErrors = trials.filter { !$0.expected && $0.outcome.kind == .harnessError }.count
            xml += "  <testsuite name=\"\(a(scenario))\" id=\"\(index)\" package=\"\(a(run.suite.name))\" tests=\"\(trials.count)\" failures=\"\(suiteFailures)\" errors=\"\(suiteErrors)\" skipped=\"0\""
            xml += " time=\"\(seconds(trials.compactMap(\.metrics.trialSeconds).reduce(0, +)))\""
            if let timestamp = timestamp(trials.first?.startedAt ?? run.startedAt) { xml += " timestamp=\"\(timestamp)\"" }
            xml += " hostname=\"\(a(run.environment.host))\">\n"
            xml += "    <properties>\n"
            for (name, value) in properties(run) { xml += "      <property name=\"\(a(name))\" value=\"\(a(value))\"/>\n" }
            xml += "    </properties>\n"
            for trial in trials { xml += testCase(trial, suite: run.suite.name) }
            xml += "  </testsuite>\n"
        }
        xml += "</testsuites>\n"
        return xml
    }

    static func testCase(_ trial: TrialRecord, suite: String) -> String {
        let name = trial.id.description
        var xml = "    <testcase name=\"\(a(name))\" classname=\"\(a("\(suite).\(trial.scenario)"))\" time=\"\(seconds(trial.metrics.trialSeconds ?? 0))\">\n"
        if !trial.expected {
            let tag = trial.outcome.kind == .harnessError ? "error" : "failure"
            var message = "\(trial.outcome.description), expected \(trial.expectedOutcomes.joined(separator: " or "))"
            if let detail = trial.outcome.message { message += ": \(detail)" }
            if let reason = CrashReason.message(for: trial) { message += " — \(reason)" }
            xml += "      <\(tag) message=\"\(a(message))\" type=\"\(a(trial.outcome.kind.rawValue))\">\(t(details(trial)))</\(tag)>\n"
        }
        if let out = trial.stdout, !out.isEmpty { xml += "      <system-out>\(t(out))</system-out>\n" }
        if let err = trial.stderr, !err.isEmpty { xml += "      <system-err>\(t(err))</system-err>\n" }
        xml += "    </testcase>\n"
        return xml
    }

    /// The outcome's message, then the head of its trace or its dump.
    static func details(_ trial: TrialRecord) -> String {
        var lines = ["outcome: \(trial.outcome.description)"]
        if let message = trial.outcome.message { lines.append(message) }
        if let reason = CrashReason.message(for: trial) { lines.append("reason: \(reason)") }
        if let trace = trial.trace {
            lines.append(TraceText.headline(trace))
            lines += TraceText.lines(trace)
        }
        if let dump = trial.dump {
            if let cycle = dump.waitCycle { lines.append("wait cycle: \(cycle.description)") }
            lines += dump.groups.prefix(6).map { DumpText.group($0) }
        }
        return lines.joined(separator: "\n")
    }

    static func properties(_ run: RunRecord) -> [(String, String)] {
        let environment = run.environment
        var properties = [
            ("strain.version", run.strainVersion), ("suite.path", run.suite.path), ("host.cores", "\(environment.cores)"),
            ("host.kernel", environment.kernel), ("swift.version", environment.swiftVersion), ("git.commit", environment.gitCommit ?? ""),
        ]
        if let build = environment.build {
            properties.append(("strain.executable", build.executablePath))
            if let id = build.buildID { properties.append(("strain.build-id", id)) }
            if let hash = build.contentHash { properties.append(("strain.binary-hash", hash)) }
        }
        return properties
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    /// JUnit's timestamp has no zone: the time in UTC, `2026-11-22T04:10:00`;
    /// nil when the record's time is not ISO 8601.
    static func timestamp(_ iso: String) -> String? {
        let parser = ISO8601DateFormatter()
        var date = parser.date(from: iso)
        if date == nil {
            parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            date = parser.date(from: iso)
        }
        guard let date else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: date)
    }

    /// Text for an attribute value.
    static func a(_ text: String) -> String {
        t(text).replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "\n", with: "&#10;")
    }

    /// Text for element content, without characters XML 1.0 forbids.
    static func t(_ text: String) -> String { MarkupText.escape(text, control: "\u{FFFD}") }
}
