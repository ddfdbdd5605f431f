import Foundation
import StrainKit
import StrainRunner
import Testing

/// The stack a closure is run on after it overflows, to tell deep recursion (it
/// completes there) from unbounded recursion (it overflows there too).
let largeStackBytes = 64 << 20

/// Runs `body` as a Strain trial on `strategy` under `profile`, in an isolated child
/// of this test process, and records an issue at the call unless it completes.
///
/// ```swift
/// @Test func decodesADeepOrderOnASecondaryThread() async {
///     await expectCompletes(on: .thread(stackBytes: 512 << 10)) {
///         _ = try JSONDecoder().decode(Order.self, from: deepOrder)
///     }
/// }
/// ```
///
/// On a stack overflow the issue carries Strain's verdict: the fault, the recursion
/// collapsed into its cycle, the frame that entered it with file:line, and, from a
/// second run on a 64 MiB stack, "deep but finite" (with the stack it needed) or
/// "unbounded". A crash, a throw, a timeout are reported the same way. The trial's
/// run.json is attached to the test.
///
/// - Parameters:
///   - name: what the trial is called in its record; give each call in a loop or a
///     parameterized test its own (`"depth \(depth)"`), so the re-run child finds it.
///   - strategy: where the closure runs: `.thread(stackBytes:)`, `.gcdGlobal(...)`, …
///   - profile: what the child emulates: `.ios` gives GCD and new threads 512 KiB stacks.
///   - timeout: past it the child is killed and the trial is `timedOut`.
///   - sourceLocation: where a failure is reported: the call, by default.
///   - body: the code under test, run in the child as the trial's work.
/// - Returns: the verdict, with the stack high-water and allocation counts of a
///   closure that completed.
///
/// - Important: the child is this test binary re-run for this one test: the test
///   runs again there up to this call. Code before the call is done twice; the
///   closure's own `#expect`s are not seen by this test (throw instead).
@discardableResult
public func expectCompletes(_ name: String? = nil, on strategy: StrategySpec = .thread(stackBytes: 512 << 10), profile: Profile = .linux,
                            timeout: Duration = .seconds(60), sourceLocation: Testing.SourceLocation = #_sourceLocation,
                            _ body: @escaping @Sendable () throws -> Void) async -> StrainVerdict {
    let verdict = await trial(name, on: strategy, profile: profile, timeout: timeout, stall: nil, namingSites: false,
                              sourceLocation: sourceLocation, body)
    _ = failUnlessCompleted(verdict, sourceLocation: sourceLocation)
    return verdict
}

/// Records an issue with the verdict, and attaches its run.json, when the closure ran
/// here and did not complete; true when it ran and completed.
func failUnlessCompleted(_ verdict: StrainVerdict, sourceLocation: Testing.SourceLocation) -> Bool {
    guard let record = verdict.record else { return false }
    guard record.outcome.kind == .completed else {
        fail(verdict, "expected the closure to complete; it ended \(verdict)", sourceLocation: sourceLocation)
        return false
    }
    return true
}

/// An issue at the expectation's line, with the trial's run.json attached.
func fail(_ verdict: StrainVerdict, _ message: String, sourceLocation: Testing.SourceLocation) {
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    StrainAttachments.attach(verdict, sourceLocation: sourceLocation)
}

/// Runs `body` as a Strain trial and records an issue at the call unless it
/// completes with at most `limit` allocations (the malloc family, counted exactly
/// in the child, as Go's `testing.AllocsPerRun` counts): the issue names the call
/// sites that allocated most.
@discardableResult
public func expectAllocations(atMost limit: Int, _ name: String? = nil, on strategy: StrategySpec = .thread(stackBytes: 8 << 20),
                              profile: Profile = .linux, timeout: Duration = .seconds(60), sourceLocation: Testing.SourceLocation = #_sourceLocation,
                              _ body: @escaping @Sendable () throws -> Void) async -> StrainVerdict {
    let verdict = await strainTrial(name, on: strategy, profile: profile, timeout: timeout, sourceLocation: sourceLocation, body)
    guard failUnlessCompleted(verdict, sourceLocation: sourceLocation) else { return verdict }
    if let count = verdict.allocations, count > limit {
        // Counts grouped as every other count Strain prints (`3,001`, not `3001`: re-trial 35q, F13).
        let grouped = { (value: Int) in MetricDescriptor.Unit.grouped(Double(value)) }
        let sites = verdict.allocationSites.prefix(5).map { "  \(grouped($0.allocations)) allocations, \(ByteSize.prose($0.bytes)) at \($0.place)" }
        fail(verdict, (["\(grouped(count)) allocations (\(ByteSize.prose(verdict.allocatedBytes ?? 0))), more than the \(grouped(limit)) allowed; most at:"] + sites)
            .joined(separator: "\n"), sourceLocation: sourceLocation)
    } else if verdict.allocations == nil {
        Issue.record(Comment(rawValue: "allocations were not counted in this trial"), sourceLocation: sourceLocation)
    }
    return verdict
}

/// Runs `body` as a Strain trial and returns the verdict without judging it: for a
/// test that pins a measurement (`#expect(verdict.stackHighWaterBytes! < 256 << 10)`).
/// An overflow is run again on a 64 MiB stack, as ``expectCompletes(_:on:profile:timeout:sourceLocation:_:)`` does.
public func strainTrial(_ name: String? = nil, on strategy: StrategySpec = .thread(stackBytes: 512 << 10), profile: Profile = .linux,
                        timeout: Duration = .seconds(60), sourceLocation: Testing.SourceLocation = #_sourceLocation,
                        _ body: @escaping @Sendable () throws -> Void) async -> StrainVerdict {
    await trial(name, on: strategy, profile: profile, timeout: timeout, stall: nil, namingSites: true, sourceLocation: sourceLocation, body)
}

/// Runs `body` as a Strain trial and records an issue at the call unless it
/// completes without stalling: when `within` passes with the closure not returned
/// and no thread of the child making progress, the trial ends `deadlocked` (its
/// threads wait on each other: the mutexes of a cycle are named) or `starved`
/// (work is queued to a pool whose threads are all blocked), and the issue shows
/// every group of threads with what it waits in.
///
/// ```swift
/// @Test func theCacheDoesNotDeadlockUnderContention() async {
///     await expectNoStall(within: .seconds(1)) {
///         DispatchQueue.concurrentPerform(iterations: 8) { _ in cache.refresh() }
///     }
/// }
/// ```
///
/// The verdict comes from the threads themselves, whatever code the closure calls:
/// nothing in it needs to report progress. A closure that computes for longer than
/// `within` is progress, not a stall; a starved pool is told from a deadlock by
/// whether the pool still adds threads, watched for up to 2.5 s after `within`.
@discardableResult
public func expectNoStall(within threshold: Duration = .seconds(1), _ name: String? = nil, on strategy: StrategySpec = .thread(stackBytes: 8 << 20),
                          profile: Profile = .linux, timeout: Duration = .seconds(60), sourceLocation: Testing.SourceLocation = #_sourceLocation,
                          _ body: @escaping @Sendable () throws -> Void) async -> StrainVerdict {
    let verdict = await trial(name, on: strategy, profile: profile, timeout: timeout, stall: threshold, namingSites: false,
                              sourceLocation: sourceLocation, body)
    _ = failUnlessCompleted(verdict, sourceLocation: sourceLocation)
    return verdict
}

/// Seconds in `duration`.
func timeInterval(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The trial behind every expectation; `stall`: the stall threshold (nil: the timeout);
/// `counted`: the closure's instructions are counted under callgrind.
/// `namingSites`: the call sites of the allocations are recorded and named (the
/// count is kept either way). Naming them reads the test binary's debug information,
/// about 0.45 s a trial for the fixture's debug build: only where a verdict shows them.
func trial(_ name: String?, on strategy: StrategySpec, profile: Profile, timeout: Duration, stall: Duration?, namingSites: Bool,
           counted: CallgrindTrials? = nil, sourceLocation: Testing.SourceLocation, _ body: @escaping @Sendable () throws -> Void) async -> StrainVerdict {
    let seconds = timeInterval(timeout)
    let stallSeconds = stall.map { min(timeInterval($0), seconds) }
    let environment = namingSites ? [:] : ["STRAIN_ALLOCATION_SITES": "off"]
    let place = ExpectationPlace.next(name: name ?? "line \(sourceLocation.line)", sourceLocation: sourceLocation)
    let call = PlainThreadRoom.Call(body)
    // The same call's second run, on a large stack: the re-run child for it stops here too.
    var largePlace = place
    largePlace.name += " on a large stack"
    let large = StrategySpec.thread(stackBytes: largeStackBytes)
    if TestTrial.child?.place == largePlace {
        _ = await TestTrial.run(call, at: largePlace, strategy: large, profile: profile, timeoutSeconds: seconds, stallSeconds: stallSeconds, environment: environment)
    }
    guard let record = await TestTrial.run(call, at: place, strategy: strategy, profile: profile, timeoutSeconds: seconds, stallSeconds: stallSeconds,
                                           environment: environment, counted: counted) else {
        return StrainVerdict(record: nil, onLargeStack: nil, build: TestTrial.build)
    }
    var onLargeStack: TrialRecord?
    if record.outcome.kind == .stackOverflow {
        onLargeStack = await TestTrial.run(call, at: largePlace, strategy: large, profile: profile, timeoutSeconds: seconds, stallSeconds: stallSeconds, environment: environment)
    }
    return StrainVerdict(record: record, onLargeStack: onLargeStack, build: TestTrial.build)
}
