import Foundation

/// GitHub Actions workflow commands (`::error file=…,line=…::message`), written
/// once for `strain run` and `strain gate`.
public enum WorkflowCommand {
    /// GitHub shows at most this many error annotations per step.
    public static let annotationLimit = 10

    /// Escapes a workflow command's message: `%`, CR and LF.
    public static func data(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    /// Escapes a workflow command's property value: as `data`, plus `:` and `,`.
    public static func property(_ text: String) -> String {
        data(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    /// The path GitHub places an annotation at: relative to the workspace (the
    /// repository's root, `$GITHUB_WORKSPACE`) when the file is inside it, however
    /// it was typed (absolute, or relative to another folder); else as typed.
    public static func annotationPath(_ path: String, workspace: String?, currentDirectory: String = FileManager.default.currentDirectoryPath) -> String {
        guard let workspace, !workspace.isEmpty else { return path }
        let absolute = path.hasPrefix("/") ? path : (currentDirectory as NSString).appendingPathComponent(path)
        let file = (absolute as NSString).standardizingPath
        let root = (workspace as NSString).standardizingPath
        guard file.hasPrefix(root + "/") else { return path }
        return String(file.dropFirst(root.count + 1))
    }

    /// `::error file=PATH,line=N,title=TITLE::MESSAGE`, the message cut to 4,000 characters.
    public static func error(file: String, line: Int?, title: String, message: String) -> String {
        var properties = ["file=\(property(file))"]
        if let line { properties.append("line=\(line)") }
        properties.append("title=\(property(title))")
        return "::error \(properties.joined(separator: ","))::\(data(String(message.prefix(4000))))"
    }

    /// An `::error` for a trial that failed at `place` in the program's own code: at that
    /// file and line when GitHub can show it there (the file inside `workspace`, or any
    /// file when there is none), the suite's entry (`file`, `line`) then named in the
    /// message; else at the suite's entry. The message names the frame either way.
    package static func error(at place: FailurePlace?, suiteFile file: String, line: Int?, workspace: String?, title: String, message: String) -> String {
        guard let place else { return error(file: annotationPath(file, workspace: workspace), line: line, title: title, message: message) }
        let frame = "\n\(place.label) \(place.frame)"
        let path = annotationPath(place.file, workspace: workspace)
        if let workspace, !workspace.isEmpty, path.hasPrefix("/") {
            return error(file: annotationPath(file, workspace: workspace), line: line, title: title, message: message + frame)
        }
        let entry = "\nplanned by \(annotationPath(file, workspace: workspace))" + (line.map { ":\($0)" } ?? "")
        return error(file: path, line: place.line, title: title, message: message + frame + entry)
    }

    /// `::notice title=TITLE::MESSAGE`.
    public static func notice(title: String, message: String) -> String {
        "::notice title=\(property(title))::\(data(message))"
    }
}

/// Where a trial failed in the program's own code, as the reports name it: the file
/// and line an annotation is placed at, and the frame.
package struct FailurePlace: Codable, Hashable, Sendable {
    /// The source file, as the debug information has it (usually absolute).
    package var file: String
    /// The line in it, from 1.
    package var line: Int
    /// `at` a crash's frame, or `entered the recursion at` for an overflow's.
    package var label: String
    /// `strain_crash_null_dereference at strain_faults.c:21:14 (strain)`.
    package var frame: String

    package init(file: String, line: Int, label: String, frame: String) {
        self.file = file
        self.line = line
        self.label = label
        self.frame = frame
    }
}

extension RunRecord {
    /// The suite's `runs:` entry that planned `key` (its line is where CI annotates the key).
    public func suiteEntry(planning key: TrialKey) -> ResolvedRun? {
        suite.runs.first { entry in
            entry.scenario == key.scenario && entry.strategies.contains { (try? StrategySpec(parsing: $0)) == key.strategy }
                && entry.profiles.contains(key.profile.rawValue)
                && key.parameters.allSatisfy { parameter in entry.parameters.first { $0.name == parameter.name }?.values.contains(parameter.value) ?? false }
        }
    }
}
