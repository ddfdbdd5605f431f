import Foundation
import StrainRecords

/// One part of a callgrind output file (format version 1, as Valgrind 3.19 writes
/// it): its total and each function's instructions, exclusive and inclusive, by
/// symbol name. A pure parser, here beside the other readers of what names code.
///
/// Read: `summary:` (the part's total), `positions:`/`events:` (the columns of a cost
/// line; the first event is counted, `Ir` with callgrind's defaults), `fn=`/`cfn=`
/// with name compression (`fn=(12) name` defines 12, `fn=(12)` refers to it), cost
/// lines (positions absolute, `+n`/`-n` relative, or `*`), and `calls=` lines, whose
/// next cost line is the call's inclusive cost. A function's inclusive cost is its
/// own plus its calls', its calls to itself left out (callgrind counts a recursion's
/// inner calls inside the outer one already).
package struct CallgrindProfile: Sendable, Equatable {
    /// What the part's `desc: Trigger:` line says (`Client Request: strain-work`).
    package var trigger: String?
    /// The part's total of the first event.
    package var total: Int
    /// Each function's instructions by its name as callgrind wrote it (mangled).
    package var functions: [String: Cost]
    /// The object file each function is in (its `ob=`), by the same names: where its
    /// symbol, and so its file:line, is looked up.
    package var objects: [String: String]

    /// The kinds of compressed names, each numbered on its own.
    enum Kind: Hashable {
        case object, file, function
    }

    /// A function's instructions.
    package struct Cost: Sendable, Equatable {
        /// In its own code.
        package var exclusive: Int
        /// In its own code and everything it called.
        package var inclusive: Int
    }

    /// Lines read between two asks of `shouldStop`.
    static let linesBetweenChecks = 4_096

    /// The profile in `text`, the contents of one part.
    ///
    /// The part is the program's to write (callgrind writes it inside the trial's
    /// process), so it is input: every cost and sum is checked against a count's range
    /// (`RecordRanges.count`, 0 to 2^53) rather than trapping, a negative cost is
    /// malformed, and every `linesBetweenChecks` lines `shouldStop` may end the read
    /// with its reason (a deadline passed, the runner was told to stop).
    package init(parsing text: String, shouldStop: () -> String? = { nil }) throws(CallgrindError) {
        var trigger: String?
        var total: Int?
        var positions = 1
        var functions: [String: Cost] = [:]
        var objects: [String: String] = [:]
        var object: String?
        // Compressed names by id, one table per kind: objects, files and functions
        // number their ids separately (`ob=(2)` and `fn=(2)` are different names).
        var names: [Kind: [String: String]] = [:]
        var function: String?
        var callee: String?
        var pendingCall = false

        /// `(12) name` defines, `(12)` refers, `name` names without compression.
        func resolve(_ value: Substring, _ kind: Kind) -> String {
            let value = value.trimmingCharacters(in: .whitespaces)
            guard value.hasPrefix("("), let close = value.firstIndex(of: ")") else { return value }
            let id = String(value[...close])
            let rest = value[value.index(after: close)...].trimmingCharacters(in: .whitespaces)
            if !rest.isEmpty { names[kind, default: [:]][id] = rest; return rest }
            return names[kind]?[id] ?? id
        }

        /// `sum + cost`, refused past a count's range; `cost` is never negative here.
        func adding(_ sum: Int, _ cost: Int, line: Int) throws(CallgrindError) -> Int {
            let (total, overflow) = sum.addingReportingOverflow(cost)
            guard !overflow, RecordRanges.count.contains(total) else { throw CallgrindError.outOfRange(line: line) }
            return total
        }

        var lineNumber = 0
        // Line by line, without an array of every line first (9 million lines of a 63 MiB
        // part took 700 MB that way, and seconds before `shouldStop` was first asked).
        var rest = text[...]
        var more = true
        while more {
            let end = rest.utf8.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
            let rawLine = rest[..<end]
            if end == rest.endIndex { more = false } else { rest = rest[rest.utf8.index(after: end)...] }
            lineNumber += 1
            if lineNumber % Self.linesBetweenChecks == 0, let reason = shouldStop() { throw CallgrindError.stopped(reason) }
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            guard let first = line.first else { continue }
            if first.isNumber || first == "+" || first == "-" || first == "*" {
                let fields = line.split(separator: " ")
                guard fields.count > positions, let cost = Int(fields[positions]) else {
                    guard fields.count == positions else { throw CallgrindError.malformed(line: lineNumber, text: String(line.prefix(80))) }
                    continue
                }
                guard let function else { throw CallgrindError.malformed(line: lineNumber, text: "a cost line before any fn=") }
                guard RecordRanges.count.contains(cost) else { throw CallgrindError.outOfRange(line: lineNumber) }
                var entry = functions[function] ?? Cost(exclusive: 0, inclusive: 0)
                if pendingCall {
                    if callee != function { entry.inclusive = try adding(entry.inclusive, cost, line: lineNumber) }
                    pendingCall = false
                } else {
                    entry.exclusive = try adding(entry.exclusive, cost, line: lineNumber)
                    entry.inclusive = try adding(entry.inclusive, cost, line: lineNumber)
                }
                functions[function] = entry
                continue
            }
            guard let equals = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else { continue }
            let key = line[..<equals]
            let value = line[line.index(after: equals)...]
            switch key {
            case "fn":
                function = resolve(value, .function)
                if functions[function!] == nil { functions[function!] = Cost(exclusive: 0, inclusive: 0) }
                if let object, objects[Self.outermost(function!)] == nil { objects[Self.outermost(function!)] = object }
            case "cfn": callee = resolve(value, .function)
            case "cfi", "cfl", "fl", "fi", "fe": _ = resolve(value, .file)
            case "ob": object = resolve(value, .object)
            case "cob": _ = resolve(value, .object)
            case "calls": pendingCall = true
            case "summary":
                total = Int(value.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
                if let total, !RecordRanges.count.contains(total) { throw CallgrindError.outOfRange(line: lineNumber) }
            case "positions": positions = value.split(separator: " ").count
            case "desc":
                let text = value.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("Trigger:") { trigger = text.dropFirst("Trigger:".count).trimmingCharacters(in: .whitespaces) }
            default: continue
            }
        }
        guard let total else { throw CallgrindError.noSummary }
        self.trigger = trigger
        self.total = total
        self.functions = try Self.mergingRecursion(functions)
        self.objects = objects
    }

    /// Callgrind names a function's recursive activations `name'2` (and deeper ones
    /// the same, its `--separate-recs` default): their own instructions are the
    /// function's, but their inclusive costs count the recursion again and again (a
    /// parser's `parseValue'2` came to 15 times the part's total). So a function's
    /// exclusive cost sums every activation, and its inclusive cost is the outermost
    /// one's, which holds the recursion once.
    ///
    /// - Throws: `CallgrindError.outOfRange` where a function's activations sum past a count's range.
    static func mergingRecursion(_ functions: [String: Cost]) throws(CallgrindError) -> [String: Cost] {
        var merged: [String: Cost] = [:]
        func adding(_ sum: Int, _ cost: Int) throws(CallgrindError) -> Int {
            let (total, overflow) = sum.addingReportingOverflow(cost)
            guard !overflow, RecordRanges.count.contains(total) else { throw CallgrindError.outOfRange(line: nil) }
            return total
        }
        for (name, cost) in functions {
            let base = Self.outermost(name)
            var entry = merged[base] ?? Cost(exclusive: 0, inclusive: 0)
            entry.exclusive = try adding(entry.exclusive, cost.exclusive)
            if base == name { entry.inclusive = try adding(entry.inclusive, cost.inclusive) }
            merged[base] = entry
        }
        for (name, cost) in merged where cost.inclusive < cost.exclusive { merged[name]?.inclusive = cost.exclusive }
        return merged
    }

    /// `parseValue` for `parseValue'2`: the name without callgrind's recursion level.
    static func outermost(_ name: String) -> String {
        guard let quote = name.lastIndex(of: "'"), name.index(after: quote) < name.endIndex,
              name[name.index(after: quote)...].allSatisfy(\.isNumber) else { return name }
        return String(name[..<quote])
    }

    /// The `inclusive` functions with the most inclusive instructions, then those of the
    /// `exclusive` with the most in their own code that are not among them; most inclusive first.
    package func top(inclusive: Int, exclusive: Int) -> [(name: String, cost: Cost)] {
        let all = functions.map { (name: $0.key, cost: $0.value) }
        let byInclusive = all.sorted { ($0.cost.inclusive, $0.name) > ($1.cost.inclusive, $1.name) }.prefix(inclusive)
        let chosen = Set(byInclusive.map(\.name))
        let byExclusive = all.filter { !chosen.contains($0.name) }
            .sorted { ($0.cost.exclusive, $0.name) > ($1.cost.exclusive, $1.name) }.prefix(exclusive)
        return (byInclusive + byExclusive).sorted { ($0.cost.inclusive, $0.name) > ($1.cost.inclusive, $1.name) }
    }
}

extension CallgrindProfile {
    /// `functions` (from `top`) as a trial records them: demangled by `symbolizer`, and
    /// those in an object `isCopy` accepts (the stripped copy callgrind ran) placed at
    /// file:line through `original`, the binary the copy was made from.
    ///
    /// Demangled and simplified, two symbols can read the same (`reabstraction thunk`):
    /// one entry each name, own costs summed, the outer one's inclusive cost kept.
    package func named(_ functions: [(name: String, cost: Cost)], by symbolizer: Symbolizer, placedIn original: String,
                       isCopy: (String) -> Bool) -> [FunctionCost] {
        let places = symbolizer.definitions(of: functions.map(\.name).filter { objects[$0].map(isCopy) ?? false }, in: original)
        var byName: [String: FunctionCost] = [:]
        var order: [String] = []
        for function in functions {
            let name = symbolizer.demangled(function.name)
            if var known = byName[name] {
                // Each cost is in a count's range (the parser checked), so the sum is far from Int.max;
                // held to the range, as a record's reader will check it.
                known.exclusive = min(known.exclusive + function.cost.exclusive, RecordRanges.count.upperBound)
                known.inclusive = max(known.inclusive, function.cost.inclusive)
                byName[name] = known
            } else {
                let place = places[function.name]
                byName[name] = FunctionCost(name: name, inclusive: function.cost.inclusive, exclusive: function.cost.exclusive,
                                            file: place?.file, line: place?.line)
                order.append(name)
            }
        }
        return order.compactMap { byName[$0] }
    }
}

/// Why a callgrind output could not be read.
package enum CallgrindError: Error, CustomStringConvertible, Equatable {
    /// A line that is not callgrind's format.
    case malformed(line: Int, text: String)
    /// No `summary:` line: not a callgrind output, or cut short.
    case noSummary
    /// A cost, or a sum of costs, below 0 or past a count's range (2^53); at `line` where one line holds it.
    case outOfRange(line: Int?)
    /// The read was ended before its end, for the reason given (a deadline, a stop signal).
    case stopped(String)

    package var description: String {
        switch self {
        case .malformed(let line, let text): "callgrind output line \(line) is not in callgrind's format: \(text)"
        case .noSummary: "the callgrind output has no summary: line (cut short?)"
        case .outOfRange(let line?): "callgrind output line \(line) holds a cost, or brings a sum of costs, outside 0 to 2^53 (\(RecordRanges.count.upperBound))"
        case .outOfRange(nil): "a function's costs in the callgrind output sum past 2^53 (\(RecordRanges.count.upperBound))"
        case .stopped(let reason): "the callgrind output was not read to its end: \(reason)"
        }
    }
}
