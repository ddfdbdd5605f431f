import Foundation
import StrainRecords

extension GateReport {
    /// JUnit XML: one test case per trial key; regressions and worse outcomes are
    /// failures, missing rows and harness errors are errors. It validates against
    /// the Jenkins xUnit JUnit schema (times with at most three decimals, no extra
    /// attributes on `testcase`).
    package func renderJUnit() -> String {
        let failures = rows.filter { $0.verdict == .regressed || $0.verdict == .outcomeChanged }.count
        let errors = rows.filter { $0.verdict == .missing || $0.verdict == .harnessError }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"\(Self.xml("strain gate: " + suite))\" tests=\"\(rows.count)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"0\">\n"
        xml += "  <testsuite name=\"\(Self.xml("gate " + suite))\" id=\"0\" package=\"\(Self.xml(suite))\" tests=\"\(rows.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"0\" time=\"0\" timestamp=\"\(Self.timestamp())\" hostname=\"\(Self.xml(candidateHost ?? "unknown"))\">\n"
        xml += "    <properties>\n"
        xml += "      <property name=\"gate.mode\" value=\"\(mode.rawValue)\"/>\n"
        xml += "      <property name=\"gate.conclusion\" value=\"\(Self.xml(conclusion))\"/>\n"
        for (side, build, commit) in [("baseline", baselineBuild, baselineCommit), ("candidate", candidateBuild, candidateCommit)] {
            if let build {
                xml += "      <property name=\"gate.\(side).executable\" value=\"\(Self.xml(build.executablePath))\"/>\n"
                if let id = build.buildID { xml += "      <property name=\"gate.\(side).build-id\" value=\"\(Self.xml(id))\"/>\n" }
                if let hash = build.contentHash { xml += "      <property name=\"gate.\(side).binary-hash\" value=\"\(Self.xml(hash))\"/>\n" }
            }
            if let commit { xml += "      <property name=\"gate.\(side).checkout\" value=\"\(Self.xml(commit))\"/>\n" }
        }
        for (index, warning) in (warnings ?? []).enumerated() {
            xml += "      <property name=\"gate.warning.\(index + 1)\" value=\"\(Self.xml(warning))\"/>\n"
        }
        xml += "    </properties>\n"
        for row in rows {
            xml += "    <testcase name=\"\(Self.xml(row.key.description))\" classname=\"\(Self.xml("strain.gate." + row.key.scenario))\" time=\"0\">\n"
            let details = ([row.outcomeReason.map { "outcome: \($0)" }, row.evidence.map { "evidence: \($0.trial) at \($0.link): \($0.line)" }].compactMap { $0 }
                + row.metrics.filter { $0.verdict != .unchanged && $0.verdict != .notGated }.map { "\($0.metric) \($0.verdict.label): \($0.reason)\(Self.statistics($0))" })
                .joined(separator: "\n")
            switch row.verdict {
            case .regressed, .outcomeChanged:
                xml += "      <failure message=\"\(Self.xml(row.verdict.label))\" type=\"\(row.verdict.rawValue)\">\(Self.xml(details))</failure>\n"
            case .missing, .harnessError:
                xml += "      <error message=\"\(Self.xml(row.verdict.label))\" type=\"\(row.verdict.rawValue)\">\(Self.xml(details))</error>\n"
            default:
                if !details.isEmpty { xml += "      <system-out>\(Self.xml(row.verdict.label + "\n" + details))</system-out>\n" }
            }
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter.string(from: Date())
    }

    /// XML text with the five entities escaped and characters XML 1.0 forbids dropped.
    static func xml(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
