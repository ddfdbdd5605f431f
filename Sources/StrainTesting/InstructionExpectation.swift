import Foundation
import Glibc
import StrainRunner
import Testing

/// Runs `body` as a Strain trial under Valgrind's callgrind, which counts the
/// instructions it executes, and records an issue at the call unless it completes in
/// at most `limit` instructions: the issue names the tested code's functions that
/// cost most, with file:line, and the functions (a library's too) that executed most.
///
/// ```swift
/// @Test func sortingAThousandKeysStaysCheap() async {
///     await expectInstructions(atMost: 2_000_000) {
///         _ = (0..<1_000).map { ($0 &* 7_919) % 1_000 }.sorted()
///     }
/// }
/// ```
///
/// An instruction count, unlike a time, does not move with the machine's load: a
/// change of 2 % is seen on a busy CI runner. What is counted is the closure's own
/// thread while it runs (and work it hands to GCD queues, as a suite's trials count);
/// the test's code around it, the harness and the child's start are not.
///
/// The child is this test binary re-run for this test under callgrind (about 50 times
/// slower than native: `timeout` is stretched to match, plus 30 s for Valgrind to
/// start, which costs a few seconds an expectation). Callgrind runs a copy of the
/// binary without its debug information (Valgrind 3.19 cannot read the DWARF 5 that
/// clang writes for C targets), made once per test process and removed at its exit;
/// the functions are placed from the original binary. A debug build counts more
/// than a release build of the same code: the verdict says which build it measured.
///
/// Where `valgrind` or `objcopy` is not on PATH, the closure is not run and a warning
/// says so and how to install them; the test does not fail for it.
@discardableResult
public func expectInstructions(atMost limit: Int, _ name: String? = nil, on strategy: StrategySpec = .thread(stackBytes: 8 << 20),
                               profile: Profile = .linux, timeout: Duration = .seconds(60),
                               sourceLocation: Testing.SourceLocation = #_sourceLocation,
                               _ body: @escaping @Sendable () throws -> Void) async -> StrainVerdict {
    precondition(limit >= 0, "expectInstructions needs a limit of 0 or more, not \(limit)")
    let counting: CallgrindTrials?
    if TestTrial.child != nil {
        counting = nil  // the re-run child is already under callgrind, or runs another expectation
    } else {
        switch CountedTestBinary.trials {
        case .success(let trials):
            counting = trials
        case .failure(let error):
            Issue.record(Comment(rawValue: "instructions were not counted: \(error.message)"), severity: .warning, sourceLocation: sourceLocation)
            return StrainVerdict(record: nil, onLargeStack: nil, build: TestTrial.build)
        }
    }
    let verdict = await trial(name, on: strategy, profile: profile, timeout: timeout, stall: nil, namingSites: false, counted: counting,
                              sourceLocation: sourceLocation, body)
    guard failUnlessCompleted(verdict, sourceLocation: sourceLocation) else { return verdict }
    guard let count = verdict.instructions else {
        let reason = verdict.record?.instructionCount?.notCountable ?? "the trial has no instruction count"
        fail(verdict, "instructions were not counted: \(reason)", sourceLocation: sourceLocation)
        return verdict
    }
    if count > limit {
        let own = verdict.costliestFunctions.prefix(4).map { function in
            "  \(counted(function.inclusive, "instruction")) in \(function.name) (\(function.place ?? "?")) with what it calls"
        }
        let busiest = verdict.busiestFunctions.prefix(3).map { function in
            "  \(counted(function.exclusive, "instruction")) in \(function.name)\(function.place.map { " (\($0))" } ?? "")"
        }
        var lines = ["\(counted(count, "instruction")), more than the \(counted(limit, "instruction")) allowed (\(TestTrial.build) build)"]
        if !own.isEmpty { lines += ["most in the tested code:"] + own }
        if !busiest.isEmpty { lines += ["most in their own instructions:"] + busiest }
        fail(verdict, lines.joined(separator: "\n"), sourceLocation: sourceLocation)
    }
    return verdict
}

/// `1,234 instructions`: a count with its separators and its noun (the verdicts' counts too).
func counted(_ count: Int, _ noun: String) -> String {
    "\(count.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) \(noun)\(count == 1 ? "" : "s")"
}

/// The stripped copy of this test binary that callgrind runs, made once per test
/// process at the first counted expectation and removed when the process exits (a
/// process killed first leaves it to the next `CallgrindTrials`, which removes the
/// folders of processes that ended).
enum CountedTestBinary {
    static let trials: Result<CallgrindTrials, CallgrindSetupError> = {
        do throws(CallgrindSetupError) {
            let trials = try CallgrindTrials(executable: TestTrial.executable, timingDependent: [])
            folder = trials.folder
            atexit { CountedTestBinary.removeFolder() }
            return .success(trials)
        } catch {
            return .failure(error)
        }
    }()

    /// The folder to remove at exit; set once, before `atexit` is registered.
    nonisolated(unsafe) private static var folder: String?

    private static func removeFolder() {
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }
}
