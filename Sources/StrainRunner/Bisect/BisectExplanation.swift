import StrainKit

/// The sentences a bisect's answers are printed as.
enum BisectExplanation {
    static func sentence(for search: BisectSearch, results: [Int: [ProbeResult]]) -> String {
        let value = { (number: Int) in text(number, in: search) }
        let tally = { (number: Int) -> String in
            let runs = results[number] ?? []
            return "\(runs.filter(\.passed).count) of \(runs.count)"
        }
        let failure = search.failure.map { " (\($0))" } ?? ""
        switch (search.verdict, search.question) {
        case (.boundary, .stack):
            let pass = search.passing!, fail = search.failing!
            return "Needs \(ByteSize.article(for: ByteSize.exact(pass))) \(ByteSize.exact(pass)) stack: completes on thread(\(ByteSize.exact(pass))) in \(tally(pass)) repetitions and fails on thread(\(ByteSize.exact(fail))) in all \(results[fail]?.count ?? 0)\(failure)."
        case (.boundary, .parameter):
            let pass = search.passing!, fail = search.failing!
            var sentence = "On \(search.strategy) (\(search.profile)), \(search.parameter!) completes up to \(grouped(pass)) (\(tally(pass)) repetitions) and fails at \(grouped(fail)) in all \(results[fail]?.count ?? 0)\(failure)."
            if let depth = search.depthAtFailure, depth > pass {
                sentence += " The overflow at \(grouped(fail)) reports a depth of \(grouped(depth)): a depth read off an overflow overstates what completes by \(grouped(depth - pass))."
            }
            return sentence
        case (.nondeterministic, _):
            let mixed = [search.mixedLow, search.mixedHigh].compactMap { $0 }.map(value)
            let always = search.passing.map { "it completes in every repetition at \(value($0))" } ?? "no value tried completed in every repetition"
            let never = search.failing.map { "fails in every repetition at \(value($0))" } ?? "no value tried failed in every repetition"
            return "Not deterministic: between \(mixed.first ?? "?") and \(mixed.last ?? "?") some repetitions complete and some fail; \(always), and \(never) (\(search.repetitions) repetitions each)\(failure)."
        case (.unbounded, _):
            let sizes = search.overflows.map { ByteSize.prose($0.stackBytes) }.joined(separator: ", ")
            let growth = search.overflows.map { "\(grouped($0.frames ?? 0)) frames on \(ByteSize.prose($0.stackBytes))" }.joined(separator: ", ")
            let cycle = search.overflows.first?.cycle.map { " (\($0.joined(separator: " → ")))" } ?? ""
            let stopped = search.overflows.last.map { $0.stackBytes < search.high ? " Stopped at \(ByteSize.prose($0.stackBytes)) rather than searching to \(ByteSize.prose(search.high)); --exhaustive probes on." : "" } ?? ""
            return "Unbounded: overflows every stack tried (\(sizes)) in the same cycle\(cycle), and fills each stack in proportion to its size (\(growth)). No stack is enough: the recursion grows with the stack and never ends.\(stopped)"
        case (.alwaysCompletes, .stack):
            return "Completes even on the smallest stack tried, \(ByteSize.prose(search.passing!)): it needs no more than that."
        case (.alwaysCompletes, .parameter):
            return "On \(search.strategy) (\(search.profile)), \(search.parameter!) completes at every value tried up to \(grouped(search.passing!)), the top of the range."
        case (.neverCompletes, .stack):
            let overflowed = results.values.joined().contains { $0.record.outcome.kind == .stackOverflow }
            return "Fails on every stack tried up to \(ByteSize.prose(search.failing!))\(failure)."
                + (overflowed ? "" : " None of the probes overflowed: this is not a matter of stack.")
        case (.neverCompletes, .parameter):
            return "On \(search.strategy) (\(search.profile)), it fails even at \(search.parameter!)=\(grouped(search.failing!)), the bottom of the range\(failure)."
        }
    }

    /// A stack as a size, a parameter value as a number.
    static func text(_ value: Int, in search: BisectSearch) -> String {
        search.question == .stack ? ByteSize.exact(value) : grouped(value)
    }

    /// `12,762`.
    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }
}

extension StackSlope {
    /// The stacks the capacities are given for.
    package static let platformStacks: [(name: String, bytes: Int)] = [
        ("Apple secondary thread (512 KiB)", 512 * 1024),
        ("Apple main thread, iOS (1 MiB)", 1 << 20),
        ("Linux default, RLIMIT_STACK (8 MiB)", 8 << 20),
    ]

    /// The line through two boundary points, or nil when they do not make one
    /// (the same value twice, or a stack that does not grow with the parameter).
    package static func fit(parameter: String, _ first: BoundaryPoint, _ second: BoundaryPoint) -> StackSlope? {
        guard first.value != second.value else { return nil }
        let slope = Double(second.stackBytes - first.stackBytes) / Double(second.value - first.value)
        guard slope > 0 else { return nil }
        let intercept = Double(first.stackBytes) - slope * Double(first.value)
        let capacities = platformStacks.map { name, bytes in
            let largest = (Double(bytes) - intercept) / slope
            return StackCapacity(name: name, stackBytes: bytes, largestValue: largest >= 1 ? Int(largest) : nil)
        }
        return StackSlope(parameter: parameter, points: [first, second], bytesPerUnit: slope, interceptBytes: intercept, capacities: capacities)
    }

}
