import Foundation
import StrainRecords
import StrainText

/// Where the run ran: the machine, the toolchain, the build, the runner's own memory, and the suite as run.
package struct EnvironmentSection: TextSection, PageSection {
    /// The machine, kernel, toolchain and build, as recorded.
    package var environment: EnvironmentRecord
    /// The Strain that ran it.
    package var strainVersion: String
    /// The runner's own peak RSS, formatted.
    package var runnerPeakRSS: String
    /// The suite as run, as pretty-printed JSON.
    package var suiteJSON: String?

    init(_ run: RunRecord) {
        environment = run.environment
        strainVersion = run.strainVersion
        runnerPeakRSS = Format.bytes(Double(run.runnerPeakRSSBytes))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        suiteJSON = (try? encoder.encode(run.suite)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The terminal leaves the environment to the files it wrote.
    package func terminalLines(_ style: TerminalStyle) -> [String] { [] }

    package func markdown() -> String {
        let escape = Markdown.escape
        var out = "## Environment\n\n"
        out += "\(escape(environment.host)), \(environment.cores) cores, \(Format.bytes(Double(environment.memoryBytes))), \(escape(environment.kernel)) \(escape(environment.architecture)), Swift \(escape(environment.swiftVersion))"
        if let commit = environment.gitCommit { out += ", commit `\(commit.prefix(12))`" }
        if let build = environment.build {
            out += build.buildID.map { ", build `\($0.prefix(12))`" } ?? build.contentHash.map { ", binary hash `\($0.prefix(12))`" } ?? ""
        }
        return out + ". Runner peak RSS \(runnerPeakRSS).\n"
    }

    package func html(into page: inout HTMLReport.Page) {
        let e = HTMLText.escape
        page.raw("<section id=\"environment\">\n<h2>Environment</h2>\n<table class=\"environment\"><tbody>")
        // The binary's row only where run.json has it (runs since the gate named builds).
        let build = environment.build.map { [("binary", "\($0.shortName) (\($0.executablePath))")] } ?? []
        let rows: [(String, String)] = [
            ("host", environment.host), ("cores", "\(environment.cores)"), ("memory", Format.bytes(Double(environment.memoryBytes))),
            ("kernel", environment.kernel), ("architecture", environment.architecture), ("Swift", environment.swiftVersion),
            ("commit", environment.gitCommit ?? "–")] + build + [("Strain", strainVersion),
            ("rlimits", environment.rlimits.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.limit($0.value, of: $0.key))" }.joined(separator: ", ")),
            ("runner peak RSS", runnerPeakRSS),
        ]
        for (name, value) in rows { page.raw("<tr><th>\(e(name))</th><td>\(e(value))</td></tr>") }
        page.raw("</tbody></table>\n<h3>The suite as run</h3>\n<pre class=\"suite\">")
        if let suiteJSON { page.raw(e(suiteJSON)) }
        page.raw("</pre>\n</section>\n")
    }

    /// `unlimited`; `8 MiB` for the byte limits (`stack`, `as`; it read `stack=8388608`), a
    /// no-break space before the unit; `20,000` for the counts.
    static func limit(_ value: Int, of name: String) -> String {
        guard value >= 0 else { return "unlimited" }
        return ["stack", "as"].contains(name) ? Format.bytes(Double(value), exact: true).replacingOccurrences(of: " ", with: "\u{00A0}") : Format.count(Double(value))
    }

    /// junit.xml's properties: the version, the suite, the machine and the build.
    func properties(suitePath: String) -> [(String, String)] {
        var properties = [
            ("strain.version", strainVersion), ("suite.path", suitePath), ("host.cores", "\(environment.cores)"),
            ("host.kernel", environment.kernel), ("swift.version", environment.swiftVersion), ("git.commit", environment.gitCommit ?? ""),
        ]
        if let build = environment.build {
            properties.append(("strain.executable", build.executablePath))
            if let id = build.buildID { properties.append(("strain.build-id", id)) }
            if let hash = build.contentHash { properties.append(("strain.binary-hash", hash)) }
        }
        return properties
    }
}
