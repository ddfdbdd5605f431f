import Foundation
import StrainKit
import Testing

/// The largest value of an integer input for which a closure still completes on a
/// strategy, found by bisection, each probe a trial of its own: "the deepest document
/// a 512 KiB thread parses".
public struct StrainBisection: Sendable, CustomStringConvertible {
    /// One value tried, and how its trial ended.
    public struct Probe: Sendable {
        /// The input tried.
        public let value: Int
        /// How its trial ended.
        public let outcome: TrialOutcome.Kind
    }

    /// The values searched.
    public let range: ClosedRange<Int>
    /// Where the closure ran.
    public let strategy: StrategySpec
    /// `debug` or `release`: the build of the test target that measured.
    public let build: String
    /// Every value tried, in the order tried; empty where it did not run here.
    public let probes: [Probe]
    /// The record of the smallest value that did not complete (the boundary's far side).
    public let firstFailure: TrialRecord?

    /// The smallest value tried above every value that completed: `deepestCompleting + 1`
    /// once the bisection is done; nil when every value tried completed.
    public var firstFailingValue: Int? {
        let deepest = deepestCompleting ?? Int.min
        return probes.filter { $0.outcome != .completed && $0.value > deepest }.map(\.value).min()
    }

    /// Whether the bisection ran in this process (not in a re-run child for another expectation).
    public var ran: Bool { !probes.isEmpty }

    /// The largest value that completed; nil when even the range's lower bound did not
    /// (or the bisection did not run here).
    public var deepestCompleting: Int? {
        probes.filter { $0.outcome == .completed }.map(\.value).max()
    }

    /// The answer in words, with every probe: `2028 is the largest value that completes
    /// on thread(512KiB) (debug build); 2029 ended stackOverflow`.
    public var description: String {
        guard ran else { return "not run in this process (a re-run for another expectation)" }
        let where_ = "on \(strategy) (\(build) build)"
        let tried = "\(probes.count) probe\(probes.count == 1 ? "" : "s"): " + probes.map { "\($0.value) \($0.outcome.rawValue)" }.joined(separator: ", ")
        guard let deepest = deepestCompleting else {
            return "even \(range.lowerBound) does not complete \(where_): it ended \(probes.first?.outcome.rawValue ?? "?")\n\(tried)"
        }
        guard let failure = firstFailure, let failed = firstFailingValue else { return "every value up to \(range.upperBound) completes \(where_)\n\(tried)" }
        return "\(deepest) is the largest value that completes \(where_); \(failed) ended \(failure.outcome.kind.rawValue)\n\(tried)"
    }
}

/// Finds the largest value in `range` for which `body` completes on `strategy`, by
/// bisection: each probe runs `body(value)` as a trial of its own in an isolated child,
/// as ``expectCompletes(_:on:profile:timeout:sourceLocation:_:)`` does. It assumes what
/// a stack budget is: every value up to some bound completes, every value above it
/// does not. Pin the answer with `#expect`:
///
/// ```swift
/// @Test func aHundredAndFiftyLevelsFitA512KiBThread() async {
///     let bisection = await deepestCompleting(in: 1...100_000, on: .thread(stackBytes: 512 << 10)) { levels in
///         _ = try JSONDecoder().decode(Node.self, from: nestedJSON(levels))
///     }
///     guard bisection.ran else { return }
///     #expect((bisection.deepestCompleting ?? 0) >= 150, "\(bisection)")
/// }
/// ```
///
/// About log₂ of the range's width probes (17 for 1...100,000), each a child process.
/// The answer depends on the build: debug frames are larger. On `.thread(stackBytes:)`
/// it is the depth a plain `Thread` of that size survives: the closure gets the room a
/// plain thread's closure gets, the harness's own frames paid for apart.
public func deepestCompleting(in range: ClosedRange<Int>, _ name: String? = nil, on strategy: StrategySpec = .thread(stackBytes: 512 << 10),
                              profile: Profile = .linux, timeout: Duration = .seconds(60), sourceLocation: Testing.SourceLocation = #_sourceLocation,
                              _ body: @escaping @Sendable (Int) throws -> Void) async -> StrainBisection {
    let seconds = timeInterval(timeout)
    let base = ExpectationPlace.next(name: name ?? "line \(sourceLocation.line)", sourceLocation: sourceLocation)
    func place(_ value: Int) -> ExpectationPlace {
        var probe = base
        probe.name = "\(base.name) = \(value)"
        return probe
    }
    // In a re-run child for one of this bisection's probes: run that value (it never returns).
    if let child = TestTrial.child?.place, child.name.hasPrefix(base.name + " = "),
       let value = Int(child.name.dropFirst(base.name.count + 3)), child == place(value) {
        _ = await TestTrial.run(PlainThreadRoom.Call(value, body), at: child, strategy: strategy, profile: profile, timeoutSeconds: seconds,
                                environment: ["STRAIN_ALLOCATION_SITES": "off"])
    }
    guard TestTrial.child == nil else {
        return StrainBisection(range: range, strategy: strategy, build: TestTrial.build, probes: [], firstFailure: nil)
    }
    var probes: [StrainBisection.Probe] = []
    var records: [Int: TrialRecord] = [:]
    func completes(_ value: Int) async -> Bool {
        guard let record = await TestTrial.run(PlainThreadRoom.Call(value, body), at: place(value), strategy: strategy, profile: profile,
                                               timeoutSeconds: seconds, environment: ["STRAIN_ALLOCATION_SITES": "off"]) else { return false }
        probes.append(.init(value: value, outcome: record.outcome.kind))
        records[value] = record
        return record.outcome.kind == .completed
    }
    // Invariant: `low` completes, `high` does not.
    var low = range.lowerBound
    var high = range.upperBound
    if await completes(high) {
        return StrainBisection(range: range, strategy: strategy, build: TestTrial.build, probes: probes, firstFailure: nil)
    }
    if !(await completes(low)) {
        return StrainBisection(range: range, strategy: strategy, build: TestTrial.build, probes: probes, firstFailure: records[low])
    }
    while high - low > 1 {
        let middle = low + (high - low) / 2
        if await completes(middle) { low = middle } else { high = middle }
    }
    return StrainBisection(range: range, strategy: strategy, build: TestTrial.build, probes: probes, firstFailure: records[high])
}
