import Foundation
import StrainRecords
import StrainText

/// `junit.xml`: one test case per trial, grouped in a test suite per scenario,
/// in the shape Jenkins, GitLab and GitHub's test-report actions read. A trial
/// whose outcome the suite did not expect is a failure (a harness error is an
/// error), with the outcome and the head of its trace; the child's output goes
/// to system-out and system-err.
package enum JUnitReport {
    package static func render(_ run: RunRecord) -> String { render(RunReport(run)) }

    /// The model's trials, laid out as JUnit XML.
    package static func render(_ report: RunReport) -> String {
        let cases = report.cases
        let suite = report.head.suiteName
        let properties = report.environment.properties(suitePath: report.head.suitePath)
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"\(a("strain: " + suite))\" tests=\"\(cases.count)\" failures=\"\(cases.failures)\" errors=\"\(cases.errors)\" time=\"\(seconds(cases.seconds))\">\n"
        for (index, scenario) in cases.scenarios.enumerated() {
            xml += "  <testsuite name=\"\(a(scenario.name))\" id=\"\(index)\" package=\"\(a(suite))\" tests=\"\(scenario.cases.count)\" failures=\"\(scenario.failures)\" errors=\"\(scenario.errors)\" skipped=\"0\""
            xml += " time=\"\(seconds(scenario.seconds))\""
            if let timestamp = timestamp(scenario.startedAt ?? report.head.startedAt) { xml += " timestamp=\"\(timestamp)\"" }
            xml += " hostname=\"\(a(report.environment.environment.host))\">\n"
            xml += "    <properties>\n"
            for (name, value) in properties { xml += "      <property name=\"\(a(name))\" value=\"\(a(value))\"/>\n" }
            xml += "    </properties>\n"
            for testCase in scenario.cases {
                xml += "    <testcase name=\"\(a(testCase.name))\" classname=\"\(a("\(suite).\(scenario.name)"))\" time=\"\(seconds(testCase.seconds))\">\n"
                if let failure = testCase.failure {
                    xml += "      <\(failure.tag) message=\"\(a(failure.message))\" type=\"\(a(failure.type))\">\(t(failure.details))</\(failure.tag)>\n"
                }
                if let out = testCase.stdout, !out.isEmpty { xml += "      <system-out>\(t(out))</system-out>\n" }
                if let err = testCase.stderr, !err.isEmpty { xml += "      <system-err>\(t(err))</system-err>\n" }
                xml += "    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        xml += "</testsuites>\n"
        return xml
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
