import Foundation
import StrainKit
import Yams

/// A problem in a suite file, with the place and the fix.
package struct SuiteError: Error, Sendable, CustomStringConvertible {
    package var file: String
    /// 1-based line and column; nil when the problem is the whole file.
    package var line: Int?
    package var column: Int?
    package var message: String
    /// The file's other mistakes, after this one, in file order (at most
    /// `SuiteParser.maximumErrors` in all).
    package var others: [SuiteError] = []
    /// Mistakes found past the bound and not listed.
    package var unlisted = 0

    package init(file: String, line: Int?, column: Int?, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// This mistake and the file's others.
    package var all: [SuiteError] { [self] + others }

    /// `Scenarios/stack.yaml:12:7: error: unknown strategy 'gcd'; valid strategies: …`,
    /// one line per mistake of the file.
    package var description: String {
        var lines = all.map(\.line1)
        if unlisted > 0 { lines.append("\(file): \(unlisted) more mistakes not listed; fix these and run again") }
        return lines.joined(separator: "\n")
    }

    private var line1: String {
        var place = file
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        return "\(place): error: \(Self.printable(message))"
    }

    /// The message with control characters (escape codes from a hostile file) shown as `\u{…}`.
    static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                result += scalar == "\t" ? "\\t" : "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Reads suite files: YAML in, a validated `Suite` out, or a `SuiteError` that
/// names the file, the line and column, and what to write instead.
package struct SuiteParser: Sendable {
    package let catalog: ScenarioCatalog

    package init(catalog: ScenarioCatalog) {
        self.catalog = catalog
    }

    static let suiteKeys = ["name", "description", "repetitions", "timeout", "stall", "profiles", "gate", "measure", "runs"]
    static let runKeys = ["scenario", "parameters", "strategies", "profiles", "repetitions", "timeout", "stall", "memory-limit", "thread-limit", "expect", "gate"]

    /// The most mistakes one parse lists; the rest are counted.
    package static let maximumErrors = 20
    /// The largest suite file read (bytes).
    package static let maximumFileBytes = 1 << 20

    /// Where a user reads what a suite is: Strain's own `Scenarios/README.md` in Strain's
    /// repository, else (a package's own strain, the bundle) `strain explain`'s starter suites.
    static var whereSuitesAreDescribed: String {
        FileManager.default.fileExists(atPath: "Scenarios/README.md") ? "see Scenarios/README.md" : "`strain explain SCENARIO` prints one to start from"
    }

    /// The counted measures a suite file asks for at its top (`measure: [instructions]`),
    /// read without the scenario catalog (a gate's suite names another build's scenarios);
    /// none where the file cannot be read or parsed (its own `run` then says why).
    package static func declaredMeasures(contentsOf path: String) -> [CountedMeasure] {
        guard let data = try? InputFile.read(path, what: "a .yaml suite", limit: maximumFileBytes),
              let text = String(data: data, encoding: .utf8),
              let top = (try? Yams.load(yaml: text)) as? [String: Any] else { return [] }
        let named = (top["measure"] as? [Any]).map { $0.compactMap { $0 as? String } } ?? (top["measure"] as? String).map { [$0] } ?? []
        return named.compactMap(CountedMeasure.init(rawValue:))
    }

    package func parse(contentsOf path: String) throws(SuiteError) -> Suite {
        let data: Data
        do {
            data = try InputFile.read(path, what: "a .yaml suite (\(Self.whereSuitesAreDescribed))", limit: Self.maximumFileBytes)
        } catch {
            throw SuiteError(file: path, line: nil, column: nil, message: error.message)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SuiteError(file: path, line: nil, column: nil, message: "the suite file is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    package func parse(_ text: String, path: String) throws(SuiteError) -> Suite {
        if let tabs = Self.tabProblems(text, path: path) { throw tabs }
        if let complex = Self.complexKeyProblems(text, path: path) { throw complex }
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw SuiteError(file: path, line: nil, column: nil, message: "the suite file is empty; it needs at least `name:` and `runs:`")
            }
            root = node
            if let expanded = Self.expansionProblem(node, path: path) { throw expanded }
        } catch let error as SuiteError {
            throw error
        } catch let error as YamlError {
            throw Self.yamlError(error, path: path, text: text)
        } catch {
            throw SuiteError(file: path, line: nil, column: nil, message: "not valid YAML: \(error)")
        }
        let reader = SuiteReader(path: path, catalog: catalog)
        let suite = reader.suite(root)
        if let first = reader.collected() { throw first }
        guard var suite else { throw SuiteError(file: path, line: nil, column: nil, message: "the suite could not be read") }
        suite.textHash = Suite.textHash(text)
        return suite
    }

    /// Every line indented with a tab, which YAML does not allow.
    static func tabProblems(_ text: String, path: String) -> SuiteError? {
        var problems: [SuiteError] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let indentation = line.prefix { $0 == " " || $0 == "\t" }
            guard let tab = indentation.firstIndex(of: "\t") else { continue }
            let column = line.distance(from: line.startIndex, to: tab) + 1
            problems.append(SuiteError(file: path, line: number + 1, column: column,
                                       message: "a tab indents this line; YAML indents with spaces only: replace the tab with spaces"))
        }
        return SuiteReader.combined(problems)
    }

    /// Every complex mapping key (`? …`, a `[…]:` / `{…}:` key, or an alias `*name:`
    /// used as a key), found in the text before Yams composes it. A suite never needs
    /// one, and Yams compares such keys against each other to find duplicates by
    /// hashing the whole expanded node: 1.7 KB of flow keys took over a minute, and
    /// 553 bytes of nested aliases used as a key (10^10 leaves) never finished (both
    /// found by fuzzing). The scan is conservative: text inside a quoted scalar that
    /// spans lines is read as YAML too, so it may refuse such text, never miss a key.
    static func complexKeyProblems(_ text: String, path: String) -> SuiteError? {
        var problems: [SuiteError] = []
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }).enumerated() {
            if let (column, what) = complexKey(in: Array(line.unicodeScalars)) {
                problems.append(SuiteError(file: path, line: number + 1, column: column,
                                           message: "a complex key (\(what)); suite keys are plain names: write `key: value`"))
            }
        }
        return SuiteReader.combined(problems)
    }

    /// The column (1-based) and kind of the first complex key on one line, outside
    /// quotes and comments.
    static func complexKey(in line: [Unicode.Scalar]) -> (column: Int, what: String)? {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
        /// Whether a `:` at `index` is a key's indicator: followed by a space, the end, or a flow bracket.
        func indicator(at index: Int) -> Bool {
            guard index < line.count, line[index] == ":" else { return false }
            return index + 1 == line.count || isSpace(line[index + 1]) || ",]}".unicodeScalars.contains(line[index + 1])
        }
        func skipSpaces(_ index: Int) -> Int {
            var index = index
            while index < line.count, isSpace(line[index]) { index += 1 }
            return index
        }
        var index = 0
        var tokenStart = true  // at the line's start, or after one of `[ { , : - ?` and spaces
        while index < line.count {
            let scalar = line[index]
            if isSpace(scalar) {
                index += 1
                continue
            }
            if scalar == "#", index == 0 || isSpace(line[index - 1]) { return nil }
            if tokenStart, scalar == "'" || scalar == "\"" {
                // A quoted scalar: skip to its closing quote on this line (`''` and `\"` stay inside).
                var end = index + 1
                while end < line.count {
                    if scalar == "'", line[end] == "'" {
                        if end + 1 < line.count, line[end + 1] == "'" { end += 2; continue }
                        break
                    }
                    if scalar == "\"", line[end] == "\\" { end += 2; continue }
                    if scalar == "\"", line[end] == "\"" { break }
                    end += 1
                }
                index = end + 1
                tokenStart = false
                continue
            }
            if tokenStart, scalar == "?", index + 1 == line.count || isSpace(line[index + 1]) {
                return (index + 1, "`?`")
            }
            if tokenStart, scalar == "*" {
                // libyaml's anchor names: ASCII letters, digits, `-` and `_` (so `*a: x` is the alias `a` as a key).
                var end = index + 1
                while end < line.count, line[end].isASCII, line[end].properties.isAlphabetic || ("0"..."9").contains(line[end]) || line[end] == "-" || line[end] == "_" { end += 1 }
                if indicator(at: skipSpaces(end)) { return (index + 1, "an alias `*name` used as a key") }
                index = end
                tokenStart = false
                continue
            }
            if scalar == "]" || scalar == "}", indicator(at: skipSpaces(index + 1)) {
                return (index + 1, "a list or mapping used as a key")
            }
            tokenStart = "[{,?-:".unicodeScalars.contains(scalar)
            index += 1
        }
        return nil
    }

    /// The most values a suite may hold once its aliases are expanded. A 1 MiB file
    /// written out holds at most about half a million; past this, aliases of aliases
    /// (YAML's "billion laughs") would make every walk over the suite take forever.
    package static let maximumExpandedValues = 1_000_000

    /// Counts the values of the composed document, aliases expanded, without
    /// recursion and stopping at the bound; a problem when the bound is passed.
    static func expansionProblem(_ root: Node, path: String) -> SuiteError? {
        var pending = [root]
        var count = 0
        while let node = pending.popLast() {
            count += 1
            if count > maximumExpandedValues {
                return SuiteError(file: path, line: nil, column: nil,
                                  message: "the suite's aliases (`*name`) expand it to more than \(maximumExpandedValues) values; write the values out, or use fewer aliases of aliases")
            }
            switch node {
            case .scalar, .alias: break
            case .sequence(let sequence): pending.append(contentsOf: sequence)
            case .mapping(let mapping):
                for (key, value) in mapping {
                    pending.append(key)
                    pending.append(value)
                }
            }
        }
        return nil
    }

    private static func yamlError(_ error: YamlError, path: String, text: String) -> SuiteError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _), .composer(let context, let problem, let mark, _):
            // An unclosed `[` or `{` is found only where the file ends: point at where it opened.
            if let context, context.text.contains("flow sequence") || context.text.contains("flow mapping") {
                let bracket = context.text.contains("sequence") ? ("[", "]") : ("{", "}")
                return SuiteError(file: path, line: context.mark.line, column: context.mark.column,
                                  message: "the `\(bracket.0)` opened here is not closed; close it with `\(bracket.1)` (\(problem))")
            }
            if problem.contains("found character that cannot start any token"), problem.contains("\t") || problem.contains("tab") {
                return SuiteError(file: path, line: mark.line, column: mark.column, message: "a tab here; YAML allows only spaces outside quotes: replace it with spaces")
            }
            return SuiteError(file: path, line: mark.line, column: mark.column, message: "not valid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams gives the whole file as the context: point at the second use of the key instead.
            let key = duplicates.first ?? ""
            let shown = key.count > 40 ? String(key.prefix(40)) + "…" : key
            let first = context.mark
            // YAML also breaks lines at \r, so its line numbers can run past a count of \n
            // (found by fuzzing: a range with lowerBound > upperBound trapped here).
            let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            var again: (line: Int, column: Int)?
            for index in max(0, first.line)..<max(max(0, first.line), lines.count) {
                let line = lines[index]
                let indent = line.prefix { $0 == " " || $0 == "-" }.count
                if indent == first.column - 1, line.dropFirst(indent).hasPrefix("\(key):") {
                    again = (index + 1, indent + 1)
                    break
                }
            }
            let place = again ?? (first.line, first.column)
            return SuiteError(file: path, line: place.line, column: place.column,
                              message: "the key '\(shown)' appears twice in one mapping (first at line \(first.line)); keep one of them")
        case .reader(let problem, _, _, _):
            return SuiteError(file: path, line: nil, column: nil, message: "not valid YAML text: \(problem)")
        default:
            return SuiteError(file: path, line: nil, column: nil, message: "not valid YAML: \(String(String(describing: error).prefix(200)))")
        }
    }
}

/// Walks the YAML tree of one file, keeping the file name for errors and
/// collecting every mistake instead of stopping at the first.
private final class SuiteReader {
    let path: String
    let catalog: ScenarioCatalog
    private var problems: [SuiteError] = []

    init(path: String, catalog: ScenarioCatalog) {
        self.path = path
        self.catalog = catalog
    }

    func error(_ node: Node?, _ message: String) -> SuiteError {
        SuiteError(file: path, line: node?.mark?.line, column: node?.mark?.column, message: message)
    }

    /// Runs `body`; a mistake it throws is kept and the reader goes on.
    func collect<T>(_ body: () throws(SuiteError) -> T) -> T? {
        do {
            return try body()
        } catch {
            problems.append(error)
            return nil
        }
    }

    /// Every mistake collected, as one error, or nil when there was none.
    func collected() -> SuiteError? { Self.combined(problems) }

    static func combined(_ problems: [SuiteError]) -> SuiteError? {
        var seen = Set<String>()
        let unique = problems.filter { seen.insert("\($0.line ?? 0):\($0.column ?? 0):\($0.message)").inserted }
        let sorted = unique.enumerated().sorted { a, b in
            (a.element.line ?? 0, a.element.column ?? 0, a.offset) < (b.element.line ?? 0, b.element.column ?? 0, b.offset)
        }.map(\.element)
        guard var first = sorted.first else { return nil }
        first.others = Array(sorted.dropFirst().prefix(SuiteParser.maximumErrors - 1))
        first.unlisted = max(0, sorted.count - SuiteParser.maximumErrors)
        return first
    }

    /// The entries of a mapping; unknown keys are mistakes (with a suggestion) and left out.
    func mapping(_ node: Node, _ what: String, keys: [String]) throws(SuiteError) -> [(key: String, keyNode: Node, value: Node)] {
        guard case .mapping(let mapping) = node else {
            throw error(node, "\(what) must be a mapping of keys to values (\(keys.joined(separator: ", ")))")
        }
        var entries: [(key: String, keyNode: Node, value: Node)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                problems.append(error(keyNode, "\(what) has a key that is not plain text; write `key: value`"))
                continue
            }
            guard keys.contains(key) else {
                problems.append(error(keyNode, "unknown key '\(Self.shortened(key))' in \(what)\(Suggestion.didYouMean(key, among: keys)); valid keys: \(keys.joined(separator: ", "))"))
                continue
            }
            entries.append((key, keyNode, value))
        }
        return entries
    }

    static func shortened(_ text: String) -> String { text.count > 60 ? String(text.prefix(60)) + "…" : text }

    func string(_ node: Node, _ what: String) throws(SuiteError) -> String {
        guard let scalar = node.scalar else { throw error(node, "\(what) must be a single value, not a list or mapping") }
        return scalar.string
    }

    /// A scalar or a list of scalars, as a list.
    func strings(_ node: Node, _ what: String) throws(SuiteError) -> [(String, Node)] {
        switch node {
        case .scalar(let scalar):
            return [(scalar.string, node)]
        case .sequence(let sequence):
            var values: [(String, Node)] = []
            for element in sequence {
                if let value = collect({ () throws(SuiteError) in try string(element, "each value of \(what)") }) { values.append((value, element)) }
            }
            guard !sequence.isEmpty else { throw error(node, "\(what) is an empty list; give at least one value") }
            return values
        default:
            throw error(node, "\(what) must be a value or a list of values")
        }
    }

    func repetitions(_ node: Node) throws(SuiteError) -> Int {
        let text = try string(node, "repetitions")
        let range = SuiteLimits.repetitions
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw error(node, "'\(Self.shortened(text))' is not a valid value for repetitions; write a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `memory-limit:`, a byte size in `SuiteLimits.memoryLimitBytes`.
    func memoryLimit(_ node: Node) throws(SuiteError) -> Int {
        let text = try string(node, "memory-limit")
        let range = SuiteLimits.memoryLimitBytes
        guard let bytes = ByteSize.parse(text.trimmingCharacters(in: .whitespaces)), range.contains(bytes) else {
            throw error(node, "'\(Self.shortened(text))' is not a valid value for memory-limit; write a size from \(ByteSize.format(range.lowerBound)) to \(ByteSize.format(range.upperBound)), such as 512MiB or 2GiB")
        }
        return bytes
    }

    /// `thread-limit:`, a whole number in `SuiteLimits.threadLimit`.
    func threadLimit(_ node: Node) throws(SuiteError) -> Int {
        let text = try string(node, "thread-limit")
        let range = SuiteLimits.threadLimit
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw error(node, "'\(Self.shortened(text))' is not a valid value for thread-limit; write a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A duration in `range`: `500ms`, `60s`, `5m`, `1h` or plain seconds; never infinite or NaN.
    func duration(_ node: Node, _ what: String, range: ClosedRange<Double>) throws(SuiteError) -> Double {
        let text = try string(node, what).trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var seconds: Double?
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            seconds = Self.finiteNumber(String(text.dropLast(suffix.count))).map { $0 * factor }
            break
        }
        if seconds == nil, text.last?.isNumber == true { seconds = Self.finiteNumber(text) }
        let limits = "from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"
        guard let seconds else {
            throw error(node, "'\(Self.shortened(text))' is not a valid value for \(what); write a duration \(limits), such as 500ms, 60s or 5m")
        }
        guard range.contains(seconds) else {
            throw error(node, "\(what) '\(Self.shortened(text))' is out of range; write a duration \(limits)")
        }
        return seconds
    }

    /// A decimal number without `inf`, `nan` or hexadecimal forms.
    static func finiteNumber(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    static func format(_ seconds: Double) -> String {
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        return "\(Int(seconds))s"
    }

    /// The gate's thresholds: `metric: {delta: 10%, floor: 1ms}`, for metrics Strain or
    /// one of the catalog's scenarios declares.
    func thresholds(_ node: Node) throws(SuiteError) -> [String: MetricThreshold] {
        let known = MetricDescriptor.builtIn + catalog.declaredMetrics(of: catalog.names)
        var result: [String: MetricThreshold] = [:]
        for (name, keyNode, value) in try mapping(node, "`gate:`", keys: known.map(\.name)) {
            let descriptor = known.first { $0.name == name }!
            var threshold = MetricThreshold()
            for (field, _, fieldValue) in try mapping(value, "the gate's threshold for \(name)", keys: ["delta", "floor"]) {
                let text = try string(fieldValue, field).trimmingCharacters(in: .whitespaces)
                if field == "delta" {
                    // Decimal only: `0x1p-3` or `inf` is no delta a reader can check at a glance.
                    let number = text.hasSuffix("%") ? Self.finiteNumber(String(text.dropLast())).map { $0 / 100 } : Self.finiteNumber(text)
                    guard let number, number.isFinite, (0...10).contains(number) else {
                        throw error(fieldValue, "'\(text)' is not a valid value for delta for \(name); write a relative change from 0% to 1000%, e.g. 10%")
                    }
                    threshold.delta = number
                } else {
                    guard let number = Self.floor(text, unit: descriptor.unit), number.isFinite, (0...1e15).contains(number) else {
                        throw error(fieldValue, "'\(text)' is not a valid value for floor for \(name) (\(descriptor.unit.rawValue)); write an amount from 0, e.g. \(Self.floorExample(descriptor.unit))")
                    }
                    threshold.floor = number
                }
            }
            _ = keyNode
            result[name] = threshold
        }
        return result
    }

    /// A floor in the metric's unit: durations for seconds and nanoseconds, sizes for bytes.
    static func floor(_ text: String, unit: MetricDescriptor.Unit) -> Double? {
        switch unit {
        case .bytes:
            return ByteSize.parse(text).map(Double.init)
        case .seconds, .nanoseconds:
            let units: [(String, Double)] = [("ns", 1e-9), ("µs", 1e-6), ("us", 1e-6), ("ms", 1e-3), ("s", 1)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                guard let value = finiteNumber(text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)) else { return nil }
                return unit == .seconds ? value * factor : value * factor * 1e9
            }
            return finiteNumber(text)
        default:
            return finiteNumber(text)
        }
    }

    static func floorExample(_ unit: MetricDescriptor.Unit) -> String {
        switch unit {
        case .bytes: "4KiB"
        case .seconds, .nanoseconds: "1ms"
        default: "2"
        }
    }

    func profiles(_ node: Node) throws(SuiteError) -> [Profile] {
        var result: [Profile] = []
        let names = Profile.allCases.map(\.rawValue)
        for (text, element) in try strings(node, "profiles") {
            guard let profile = Profile(rawValue: text) else {
                problems.append(error(element, "unknown profile '\(Self.shortened(text))'\(Suggestion.didYouMean(text, among: names)); valid profiles: \(names.joined(separator: ", "))"))
                continue
            }
            guard !result.contains(profile) else {
                problems.append(error(element, "profile '\(text)' is listed twice; list each once"))
                continue
            }
            result.append(profile)
        }
        return result
    }

    /// `measure: [instructions]`: the counted passes the suite asks for, each listed once.
    func measures(_ node: Node) throws(SuiteError) -> [CountedMeasure] {
        var result: [CountedMeasure] = []
        let names = CountedMeasure.allCases.map(\.rawValue)
        for (text, element) in try strings(node, "measure") {
            guard let measure = CountedMeasure(rawValue: text) else {
                problems.append(error(element, "unknown measure '\(Self.shortened(text))'\(Suggestion.didYouMean(text, among: names)); valid measures: \(names.joined(separator: ", "))"))
                continue
            }
            guard !result.contains(measure) else {
                problems.append(error(element, "measure '\(text)' is listed twice; list each once"))
                continue
            }
            result.append(measure)
        }
        return result
    }

    func suite(_ root: Node) -> Suite? {
        var name: String?
        var description: String?
        var repetitions = 1
        var timeout = 60.0
        var stall = Suite.defaultStallSeconds
        var stallNode: Node?
        var refused = false  // a stall or timeout the file gave and that was refused
        var profiles: [Profile] = [.linux]
        var runNodes: Node?
        var gate: [String: MetricThreshold] = [:]
        var measures: [CountedMeasure] = []
        guard let entries = collect({ () throws(SuiteError) in try mapping(root, "the suite", keys: SuiteParser.suiteKeys) }) else { return nil }
        for (key, _, value) in entries {
            switch key {
            case "name": name = collect { () throws(SuiteError) in try string(value, "name") }
            case "description": description = collect { () throws(SuiteError) in try string(value, "description") }
            case "repetitions": repetitions = collect { () throws(SuiteError) in try self.repetitions(value) } ?? repetitions
            case "timeout":
                let read = collect { () throws(SuiteError) in try duration(value, "timeout", range: SuiteLimits.timeoutSeconds) }
                timeout = read ?? timeout
                refused = refused || read == nil
            case "stall":
                stallNode = value
                let read = collect { () throws(SuiteError) in try duration(value, "stall", range: SuiteLimits.stallSeconds) }
                stall = read ?? stall
                refused = refused || read == nil
            case "profiles": profiles = collect { () throws(SuiteError) in try self.profiles(value) } ?? profiles
            case "gate": gate = collect { () throws(SuiteError) in try thresholds(value) } ?? [:]
            case "measure": measures = collect { () throws(SuiteError) in try self.measures(value) } ?? []
            default: runNodes = value
            }
        }
        let hasName = entries.contains { $0.key == "name" }
        if !hasName { problems.append(error(root, "the suite has no `name:`; add one, e.g. `name: stack`")) }
        if hasName, name?.trimmingCharacters(in: .whitespaces).isEmpty == true {
            problems.append(error(entries.first { $0.key == "name" }?.value, "`name:` is empty; give the suite a name, e.g. `name: stack`"))
        }
        if !refused { checkStall(stall, timeout: timeout, node: stallNode) }
        guard let runNodes else {
            problems.append(error(root, "the suite has no `runs:`; add a list of runs, each with `scenario:` and `strategies:`"))
            return nil
        }
        guard case .sequence(let sequence) = runNodes, !sequence.isEmpty else {
            problems.append(error(runNodes, "`runs:` must be a list of runs, each starting with `- scenario: NAME`"))
            return nil
        }
        var runs: [ReadRun] = []
        for node in sequence {
            if let run = self.run(node, repetitions: repetitions, timeout: timeout, stall: stall, stallGiven: stallNode != nil, profiles: profiles) { runs.append(run) }
        }
        checkPlan(runs)
        return Suite(name: name ?? "", description: description, path: path, repetitions: repetitions, timeoutSeconds: timeout,
                     stallSeconds: stall, profiles: profiles, runs: runs.map(\.run), gate: gate, measures: measures)
    }

    /// A stall threshold must leave the deadline room to be reached.
    func checkStall(_ stall: Double, timeout: Double, node: Node?) {
        guard stall >= timeout, let node else { return }
        problems.append(error(node, "stall \(Self.format(stall)) is not shorter than the timeout \(Self.format(timeout)), so the watchdog could never step in; make stall shorter than timeout"))
    }

    /// A run as read, with where it stands in the file and its scenario, for the checks over the whole plan.
    struct ReadRun {
        var run: SuiteRun
        var node: Node
        var scenarioNode: Node
        var scenario: any Scenario.Type
    }

    /// One run; `stallGiven` says whether the suite set `stall:` (the default applies quietly).
    func run(_ node: Node, repetitions: Int, timeout: Double, stall: Double, stallGiven: Bool, profiles: [Profile]) -> ReadRun? {
        guard let entries = collect({ () throws(SuiteError) in try mapping(node, "a run", keys: SuiteParser.runKeys) }) else { return nil }
        guard let scenarioEntry = entries.first(where: { $0.key == "scenario" }) else {
            problems.append(error(node, "this run has no `scenario:`; valid scenarios: \(catalog.names.joined(separator: ", "))"))
            return nil
        }
        guard let scenarioName = collect({ () throws(SuiteError) in try string(scenarioEntry.value, "scenario") }) else { return nil }
        let scenario = catalog.scenario(named: scenarioName)
        if scenario == nil {
            problems.append(error(scenarioEntry.value, "unknown scenario '\(Self.shortened(scenarioName))'\(Suggestion.didYouMean(scenarioName, among: catalog.names)); valid scenarios: \(catalog.names.joined(separator: ", "))"))
        }
        var run = SuiteRun(
            scenario: scenarioName, parameters: [], strategies: [], profiles: profiles,
            repetitions: repetitions, timeoutSeconds: timeout, stallSeconds: stall, expectations: [:]
        )
        run.line = node.mark?.line
        var given: [String: [String]] = [:]
        var expectNode: Node?
        var stallNode: Node?
        var refused = false  // a stall or timeout the run gave and that was refused
        var timeoutNode: Node?
        var strategiesGiven = false
        for (key, _, value) in entries {
            switch key {
            case "parameters": if let scenario { given = collect { () throws(SuiteError) in try parameters(value, scenario: scenario) } ?? [:] }
            case "strategies":
                strategiesGiven = true
                run.strategies = collect { () throws(SuiteError) in try strategies(value) } ?? []
            case "profiles": run.profiles = collect { () throws(SuiteError) in try self.profiles(value) } ?? run.profiles
            case "repetitions": run.repetitions = collect { () throws(SuiteError) in try self.repetitions(value) } ?? run.repetitions
            case "timeout":
                timeoutNode = value
                let read = collect { () throws(SuiteError) in try duration(value, "timeout", range: SuiteLimits.timeoutSeconds) }
                run.timeoutSeconds = read ?? run.timeoutSeconds
                refused = refused || read == nil
            case "stall":
                stallNode = value
                let read = collect { () throws(SuiteError) in try duration(value, "stall", range: SuiteLimits.stallSeconds) }
                run.stallSeconds = read ?? run.stallSeconds
                refused = refused || read == nil
            case "memory-limit": run.memoryLimitBytes = collect { () throws(SuiteError) in try memoryLimit(value) }
            case "thread-limit": run.threadLimit = collect { () throws(SuiteError) in try threadLimit(value) }
            case "expect": expectNode = value
            case "gate": run.gate = collect { () throws(SuiteError) in try thresholds(value) } ?? [:]
            default: break
            }
        }
        // A stall or timeout already refused is not compared: the other side would be a default the file never wrote (re-trial 35q, F5).
        if !refused, stallNode != nil {
            checkStall(run.stallSeconds, timeout: run.timeoutSeconds, node: stallNode)
        } else if !refused, stallGiven, let timeoutNode, run.stallSeconds >= run.timeoutSeconds {
            // The suite's stall applies here too: one rule, whichever level set either value.
            problems.append(error(timeoutNode, "timeout \(Self.format(run.timeoutSeconds)) is not longer than the suite's stall \(Self.format(run.stallSeconds)), so the watchdog could never step in; make timeout longer, or give this run a shorter `stall:`"))
        }
        if !strategiesGiven {
            problems.append(error(node, "the run of '\(Self.shortened(scenarioName))' has no `strategies:`; add a list such as [gcd-global, thread(512KiB)]"))
        }
        // Read whatever the scenario and strategies are: an outcome's name depends on
        // neither, and a typo in it is one more mistake to list at once. With no strategy
        // read, a strategy `expect:` names is checked by its name only.
        if let expectNode {
            let listed = run.strategies.isEmpty ? nil : run.strategies
            run.expectations = collect { () throws(SuiteError) in try expectations(expectNode, strategies: listed, profiles: run.profiles) } ?? [:]
        }
        guard let scenario else { return nil }
        run.parameters = scenario.parameterSpecs.map { spec in (spec.name, given[spec.name] ?? [spec.defaultValue]) }
        return ReadRun(run: run, node: node, scenarioNode: scenarioEntry.value, scenario: scenario)
    }

    /// The checks over the whole plan, made from counts before any trial exists: its
    /// size (a product of counts, checked for overflow, refused at the run that takes
    /// it past `SuiteLimits.maximumTrials`), then, within that size, each run's
    /// parameter reads and that no two runs plan the same trial. The work is bounded
    /// by the plan limit, whatever the file asks for.
    func checkPlan(_ runs: [ReadRun]) {
        var counts: [Int?] = []
        var total: Int? = 0
        for read in runs {
            let count = SuiteLimits.trialCount(of: read.run)
            counts.append(count)
            if let sum = total, let count { total = sum.addingReportingOverflow(count).overflow ? nil : sum + count } else { total = nil }
        }
        var running = 0
        var planners: [TrialKey: (run: Int, line: Int)] = [:]
        for (index, (read, count)) in zip(runs, counts).enumerated() {
            guard let count, !running.addingReportingOverflow(count).overflow, running + count <= SuiteLimits.maximumTrials else {
                let size = total.map { "\($0)" } ?? "more than \(Int.max)"
                problems.append(error(read.node, "the plan has \(size) trials (parameter values × profiles × repetitions × strategies, summed over the runs), past the limit of \(SuiteLimits.maximumTrials) from this run on; sweep fewer values, or split the suite"))
                return
            }
            running += count
            checkReads(of: read.scenario, with: read.run.parameters, at: read.scenarioNode)
            checkOverlap(read, index: index, planners: &planners)
        }
    }

    /// A trial planned by two runs would run twice under one ID, and run.json would keep
    /// one of them: refused, naming both runs.
    func checkOverlap(_ read: ReadRun, index: Int, planners: inout [TrialKey: (run: Int, line: Int)]) {
        let line = read.node.mark?.line ?? 0
        for combination in Plan.combinations(read.run.parameters) {
            let parameters = Plan.ordered(combination, as: read.run.parameters)
            for profile in read.run.profiles {
                for strategy in read.run.strategies {
                    let key = TrialKey(scenario: read.run.scenario, parameters: parameters, strategy: strategy, profile: profile)
                    if let first = planners[key], first.run != index {
                        problems.append(error(read.node, "this run plans \(key.description), which the run at line \(first.line) plans too; a trial runs once per repetition: remove the overlap from one of them (or raise `repetitions:`)"))
                        return
                    }
                    planners[key] = (index, line)
                }
            }
        }
    }

    func parameters(_ node: Node, scenario: any Scenario.Type) throws(SuiteError) -> [String: [String]] {
        let specs = scenario.parameterSpecs
        let names = specs.map(\.name)
        guard !names.isEmpty else {
            throw error(node, "scenario '\(scenario.name)' takes no parameters; remove `parameters:`")
        }
        var result: [String: [String]] = [:]
        for (key, _, value) in try mapping(node, "the parameters of '\(scenario.name)'", keys: names) {
            guard let spec = specs.first(where: { $0.name == key }) else { continue }
            var values: [String] = []
            guard let texts = collect({ () throws(SuiteError) in try strings(value, "parameter '\(key)'") }) else { continue }
            for (text, element) in texts {
                if let problem = spec.problem(with: text) {
                    problems.append(error(element, problem + Self.choiceSuggestion(text, spec)))
                    continue
                }
                guard !values.contains(text) else {
                    problems.append(error(element, "value '\(Self.shortened(text))' of parameter '\(key)' is listed twice; list each once"))
                    continue
                }
                values.append(text)
            }
            if !values.isEmpty { result[key] = values }
        }
        return result
    }

    /// Creates the scenario with every combination of the run's values, as the
    /// children will, and refuses the run if it reads a parameter it does not
    /// declare: a mistake in the scenario's code, named before any trial starts.
    func checkReads(of scenario: any Scenario.Type, with parameters: [(name: String, values: [String])], at node: Node) {
        var reported = Set<String>()
        // A run's plan holds every combination anyway; past 10,000 the first ones show the mistake.
        for combination in Plan.combinations(parameters).prefix(10_000) {
            for problem in scenario.undeclaredReads(combination) where reported.insert(problem).inserted {
                problems.append(error(node, problem))
            }
        }
    }

    static func choiceSuggestion(_ text: String, _ spec: ParameterSpec) -> String {
        guard case .choice(let names) = spec.kind else { return "" }
        return Suggestion.didYouMean(text, among: names)
    }

    func strategies(_ node: Node) throws(SuiteError) -> [StrategySpec] {
        var result: [StrategySpec] = []
        for (text, element) in try strings(node, "strategies") {
            guard let strategy = collect({ () throws(SuiteError) in try self.strategy(text, element) }) else { continue }
            guard !result.contains(strategy) else {
                problems.append(error(element, "strategy '\(Self.shortened(text))' is listed twice; list each once"))
                continue
            }
            result.append(strategy)
        }
        return result
    }

    func strategy(_ text: String, _ node: Node) throws(SuiteError) -> StrategySpec {
        let strategy: StrategySpec
        do {
            strategy = try StrategySpec(parsing: text)
        } catch {
            let name = String(text.trimmingCharacters(in: .whitespaces).prefix { $0 != "(" })
            let hint = error.description.hasPrefix("unknown strategy") ? Suggestion.didYouMean(name, among: StrategySpec.Form.all.map(\.name)) : ""
            throw self.error(node, error.description.replacingOccurrences(of: "; valid strategies", with: "\(hint); valid strategies"))
        }
        try checkLimits(strategy, text: text, node: node)
        return strategy
    }

    /// Stack sizes are whole pages (their floor and ceiling are the strategy's own,
    /// `StrategySpec.minimumStackBytes`, checked as it parses); pools fit the
    /// machine. One rule per limit, for every strategy that makes its own
    /// threads (`StrategySpec.ownThreads`), so a new strategy cannot miss one.
    func checkLimits(_ strategy: StrategySpec, text: String, node: Node) throws(SuiteError) {
        guard let (count, bytes) = strategy.ownThreads else { return }
        let page = SuiteLimits.pageBytes
        if bytes % page != 0 {
            let fixed = strategy.withStack((bytes / page + 1) * page) ?? strategy
            throw error(node, "the stack size in '\(Self.shortened(text))' is not a whole number of \(page / 1024)KiB pages; did you mean \(fixed.description)?")
        }
        let cap = SuiteLimits.maximumPoolThreads
        if count > cap {
            throw error(node, "'\(Self.shortened(text))' asks for \(count) threads; this machine allows at most \(cap) in a pool (a quarter of its thread limits); use \(cap) or fewer")
        }
        let (reserved, overflow) = count.multipliedReportingOverflow(by: bytes)
        if overflow || reserved > SuiteLimits.maximumPoolStackBytes {
            throw error(node, "'\(Self.shortened(text))' reserves \(overflow ? "more than \(ByteSize.format(Int.max))" : ByteSize.format(reserved)) of stacks; the limit is \(ByteSize.format(SuiteLimits.maximumPoolStackBytes)): use fewer threads or smaller stacks")
        }
    }

    /// `expect:` as accepted outcomes by key: `default`, a strategy (`thread(512KiB)`),
    /// a profile's default (`ios/default`) or a profile's strategy (`ios/thread(512KiB)`).
    /// `strategies` is nil when the run's could not be read: a strategy named here is then
    /// checked by its name only, not against a list a mistake left empty.
    func expectations(_ node: Node, strategies: [StrategySpec]?, profiles: [Profile]) throws(SuiteError) -> [String: [ExpectedOutcome]] {
        let outcomeNames = TrialOutcome.Kind.allCases.filter { $0 != .harnessError }.map(\.rawValue)
        func outcomes(_ value: Node) throws(SuiteError) -> [ExpectedOutcome] {
            var result: [ExpectedOutcome] = []
            for (text, element) in try strings(value, "expected outcomes") {
                guard let outcome = ExpectedOutcome(parsing: text), outcome.kind != .harnessError else {
                    let name = String(text.prefix { $0 != "(" })
                    if name.trimmingCharacters(in: .whitespaces) == TrialOutcome.Kind.crashed.rawValue, text.contains("(") {
                        let range = SignalName.numbers
                        problems.append(error(element, "'\(Self.shortened(text))' names no signal a process can die of; write a name such as crashed(SIGSEGV) or a number from \(range.lowerBound) to \(range.upperBound)"))
                        continue
                    }
                    // An outcome `strain list` shows, refused as "unknown" with no reason (re-trial 35q, F14).
                    if name.trimmingCharacters(in: .whitespaces) == TrialOutcome.Kind.harnessError.rawValue {
                        problems.append(error(element, "harnessError cannot be expected: it is Strain's own failure, never the code under test's, and always fails the run (exit code 3); remove it from expect"))
                        continue
                    }
                    problems.append(error(element, "unknown outcome '\(Self.shortened(text))'\(Suggestion.didYouMean(name, among: outcomeNames)); valid outcomes: \(outcomeNames.joined(separator: ", ")) (crashed takes a signal: crashed(SIGSEGV))"))
                    continue
                }
                result.append(outcome)
            }
            return result
        }
        // `expect: completed` applies to every strategy.
        if node.scalar != nil || node.sequence != nil { return ["default": try outcomes(node)] }
        guard case .mapping(let mapping) = node else {
            throw error(node, "`expect:` must be outcomes, or a mapping from strategy, profile (or `default`) to outcomes")
        }
        var result: [String: [ExpectedOutcome]] = [:]
        var firstSpelling: [String: (text: String, line: Int?)] = [:]
        /// Reads `key: outcomes` where `key` is `default` or a strategy of this run, into `result[prefix + key]`.
        func strategyEntry(_ keyNode: Node, _ key: String, _ value: Node, profile: Profile?) {
            let prefix = profile.map { "\($0.rawValue)/" } ?? ""
            if key == "default" {
                result[prefix + key] = collect { () throws(SuiteError) in try outcomes(value) }
                return
            }
            guard let strategy = collect({ () throws(SuiteError) in try self.strategy(key, keyNode) }) else { return }
            if let strategies, !strategies.contains(strategy) {
                problems.append(error(keyNode, "expect names '\(Self.shortened(key))', which this run does not list in `strategies:` (\(strategies.map(\.description).joined(separator: ", "))); name one of those or `default`"))
                return
            }
            if let first = firstSpelling[prefix + strategy.description] {
                problems.append(error(keyNode, "expect names \(strategy.description)\(profile.map { " under \($0.rawValue)" } ?? "") twice, as '\(Self.shortened(first.text))'\(first.line.map { " at line \($0)" } ?? "") and as '\(Self.shortened(key))' here; keep one of them"))
                return
            }
            firstSpelling[prefix + strategy.description] = (key, keyNode.mark?.line)
            result[prefix + strategy.description] = collect { () throws(SuiteError) in try outcomes(value) }
        }
        for (keyNode, value) in mapping {
            guard let key = collect({ () throws(SuiteError) in try string(keyNode, "a strategy or profile under expect") }) else { continue }
            guard let profile = Profile(rawValue: key) else {
                strategyEntry(keyNode, key, value, profile: nil)
                continue
            }
            // `ios: [stackOverflow]` or `ios: {thread(512KiB): stackOverflow, default: completed}`.
            guard profiles.contains(profile) else {
                problems.append(error(keyNode, "expect names profile '\(key)', which this run does not run on (`profiles:` \(profiles.map(\.rawValue).joined(separator: ", "))); add it to the run's `profiles:` or remove this entry"))
                continue
            }
            guard case .mapping(let perStrategy) = value else {
                result["\(key)/default"] = collect { () throws(SuiteError) in try outcomes(value) }
                continue
            }
            for (innerKeyNode, innerValue) in perStrategy {
                guard let innerKey = collect({ () throws(SuiteError) in try string(innerKeyNode, "a strategy under expect's \(key)") }) else { continue }
                if Profile(rawValue: innerKey) != nil {
                    problems.append(error(innerKeyNode, "expect's \(key) names profile '\(innerKey)' inside it; profiles do not nest: under \(key), name strategies or `default`, and give \(innerKey) its own entry beside \(key)"))
                    continue
                }
                strategyEntry(innerKeyNode, innerKey, innerValue, profile: profile)
            }
        }
        return result
    }
}

/// "Did you mean" for a mistyped name, the one rule for a suite's names and the
/// command line's commands and options: the closest valid name by edit distance,
/// when it is close enough to be a typo.
package enum Suggestion {
    /// ` (did you mean 'thread'?)` or an empty string.
    static func didYouMean(_ text: String, among names: [String]) -> String {
        nearest(to: text, among: names).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// The name of `names` nearest to `text` (case aside) when it is within a third of
    /// its length in edits (1 to 3), or begins with `text` of 3 or more characters; else nil.
    package static func nearest(to text: String, among names: [String]) -> String? {
        let lowered = text.lowercased()
        guard !lowered.isEmpty, lowered.count <= 64 else { return nil }
        let scored = names.map { ($0, distance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        let allowed = max(1, min(3, best.0.count / 3))
        guard best.1 <= allowed || best.0.lowercased().hasPrefix(lowered) && lowered.count >= 3 else { return nil }
        return best.0
    }

    /// Edit distance counting a swap of two neighbours as one edit (optimal string alignment).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
