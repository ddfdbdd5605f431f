import Foundation
import Glibc
import StrainHost
import StrainKit
import StrainRunner
import StrainWire
import Testing

/// A closure from a test run as a Strain trial, in an isolated child of the test
/// process: the test binary itself, re-run for the one test (`--filter`), which runs
/// the test until it reaches the same expectation and there becomes the trial's
/// host (the probe, the strategy, the watchdog, the result pipe) and runs the
/// closure. The test process is the parent, through the runner's one trial pipeline
/// (`TrialSupervisor`: launch, watch, classify, record).
///
/// - Important: the re-run child runs the test from its start, so what the test
///   does before the expectation is done again there; expectations before it are
///   skipped (their closures do not run). Its own `#expect`s are the child's, not
///   the test's: a closure reports a failure by throwing (the trial ends `threw`).
enum TestTrial {
    /// In a re-run test process: the expectation to run, and its trial's spec.
    static let child: (place: ExpectationPlace, specJSON: String)? = {
        guard let placeText = getenv(ChildEnvironment.testingExpectation).map({ String(cString: $0) }),
              let spec = getenv(ChildEnvironment.trialSpec).map({ String(cString: $0) }),
              let place = try? JSONDecoder().decode(ExpectationPlace.self, from: Data(placeText.utf8)) else { return nil }
        return (place, spec)
    }()

    /// The test binary, which the child re-runs.
    static let executable: String = {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return length > 0 ? String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }()

    /// Which build measured: stack use differs between debug and release.
    static var build: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    /// Runs `body` as a trial on `strategy` under `profile` and returns its record;
    /// nil in a re-run child at every other expectation (that one never returns there).
    /// `stallSeconds`: no progress for that long (the closure has not returned and its
    /// threads wait) ends the trial `deadlocked` or `starved`; nil: only the timeout ends it.
    /// `counted`: the child runs under callgrind, which counts the closure's instructions
    /// (the stripped copy of this test binary, `CountedTests.trials`).
    static func run(_ body: PlainThreadRoom.Call, at place: ExpectationPlace, strategy: StrategySpec, profile: Profile,
                    timeoutSeconds: Double, stallSeconds: Double? = nil, environment: [String: String] = [:],
                    counted: CallgrindTrials? = nil) async -> TrialRecord? {
        if let child {
            guard child.place == place else { return nil }
            ClosureScenario.body = body
            // The trial runs on a thread of its own and ends this process; this task waits
            // for good, and its pool thread is free for whatever Swift concurrency work
            // the closure starts (the pool is as wide as the machine has cores).
            let specJSON = child.specJSON
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in
                let host = Thread { TrialHost.runInRunningProcess(specJSON: specJSON, catalog: ScenarioCatalog([ClosureScenario.self])) }
                host.name = "strain.test-host"
                host.stackSize = 8 << 20
                host.start()
            }
            return nil
        }
        let key = TrialKey(scenario: ClosureScenario.name, parameters: [.init(name: "expectation", value: place.name)],
                           strategy: strategy, profile: profile)
        let spec = TrialSpec(index: 0, id: TrialID(key: key, repetition: 1), seed: 1, timeoutSeconds: timeoutSeconds,
                             stallSeconds: stallSeconds ?? timeoutSeconds, expected: [ExpectedOutcome(kind: .completed)])
        let placeJSON = (try? JSONEncoder().encode(place)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        var configured = TrialSupervisor(executable: executable, isolation: .spawn, callgrind: counted, notice: { _ in })
        // The profile's thread stacks through RLIMIT_STACK, set before the test binary
        // starts (a soft limit, through sh's `ulimit -S -s`): glibc sizes every thread's
        // default stack by it, GCD's and Swift Testing's included, which were running
        // before the expectation was reached (the profile set there reached none of them).
        let testArguments = ["--testing-library", "swift-testing", "--filter", filter(for: Test.current)]
        // Counted: callgrind runs the stripped copy of this binary (its `command` names it).
        let program = counted.map { $0.command(trialArguments: testArguments) } ?? (executable: executable, arguments: testArguments)
        let launched = profile.threadStackBytes.map { bytes in
            (executable: "/bin/sh", arguments: ["-c", "ulimit -S -s \(bytes / 1024) && exec \"$0\" \"$@\"", program.executable] + program.arguments)
        } ?? program
        let childEnvironment = ["\(ChildEnvironment.testingExpectation)=\(placeJSON)"] + environment.map { "\($0.key)=\($0.value)" }
        configured.command = TrialCommand(
            executable: launched.executable,
            arguments: launched.arguments,
            environment: counted.map { $0.environment(childEnvironment) } ?? childEnvironment
        )
        let supervisor = configured
        let record = await withCheckedContinuation { continuation in
            // The supervisor waits for its child: on a thread of its own, never on the
            // cooperative pool the tests run on.
            let thread = Thread { continuation.resume(returning: supervisor.run(spec)) }
            thread.name = "strain.expectation"
            thread.start()
        }
        return record
    }

    /// `--filter`'s pattern for `test` alone: its module and names, each escaped,
    /// joined by either separator a test's ID is spelled with (`Module.Suite/test()`).
    static func filter(for test: Test?) -> String {
        guard let test else { return "^$" }
        return ([test.id.moduleName] + test.id.nameComponents).map(NSRegularExpression.escapedPattern(for:)).joined(separator: "[./]")
    }
}
