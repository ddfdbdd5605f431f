internal import CStrainProbe
import Foundation
import Glibc
import StrainKit

/// Runs a bisect's searches, fits the slope from their boundary points, and
/// writes the whole as a run: the probes as its trials (journalled as they
/// end), the answers as run.json's `bisect` section.
package struct BisectController {
    /// Where the probes run (the supervisor).
    package var runner: any BisectProbeRunner
    /// Where run.json and trials.jsonl go.
    package var outputDirectory: String

    package init(runner: any BisectProbeRunner, outputDirectory: String) {
        self.runner = runner
        self.outputDirectory = outputDirectory
    }

    package var runJSONPath: String { (outputDirectory as NSString).appendingPathComponent("run.json") }
    package var journalPath: String { (outputDirectory as NSString).appendingPathComponent("trials.jsonl") }

    /// Why a bisect could not finish.
    package enum Failure: Error, CustomStringConvertible {
        /// A probe ended in a harness error.
        case harness(String)
        /// The records could not be written.
        case records(any Error)

        package var description: String {
            switch self {
            case .harness(let text): text
            case .records(let error): "could not write the run's records: \(error)"
            }
        }
    }

    /// Runs `requests` in order. With `slopeParameter`, the first two searches'
    /// boundaries are the points the slope is fitted through.
    package func run(_ requests: [BisectRequest], slopeParameter: String?, progress: @escaping (TrialRecord) -> Void) throws(Failure) -> RunRecord {
        let journal: Journal
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
            journal = try Journal(path: journalPath)
        } catch {
            throw .records(error)
        }
        let startedAt = Date().formatted(.iso8601)
        let environment = EnvironmentProbe.current()
        let started = strain_monotonic_ns()
        var journalError: (any Error)?
        let bisector = Bisector(runner: runner) { trial in
            do { try journal.append(trial) } catch { journalError = error }
            progress(trial)
        }
        var searches: [BisectSearch] = []
        for request in requests {
            do {
                searches.append(try bisector.search(request))
            } catch {
                throw .harness(error.description)
            }
        }
        if let journalError { throw .records(journalError) }
        let measured = Self.measuredOn(isolation: (runner as? TrialSupervisor)?.isolation, build: EnvironmentProbe.buildConfiguration)
        for index in searches.indices { searches[index].explanation += " " + measured }
        let slope = slopeParameter.flatMap { name in
            Self.slope(parameter: name, searches: searches, requests: requests)
        }
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        var run = RunRecord(
            suite: Self.suite(requests), environment: environment, startedAt: startedAt,
            finishedAt: Date().formatted(.iso8601), runnerPeakRSSBytes: usage.ru_maxrss * 1024, trials: bisector.trials
        )
        run.bisect = BisectSection(searches: searches, slope: slope, wallSeconds: Double(strain_monotonic_ns() - started) / 1e9)
        run.execution = (runner as? TrialSupervisor)?.executionRecord()
        do {
            try RunRecordFile.write(run, to: runJSONPath)
        } catch {
            throw .records(error)
        }
        return run
    }

    /// Whether this binary carries Swift's Foundation in itself (`--static-swift-stdlib`,
    /// the release bundle) rather than loading the toolchain's `libFoundation.so`: the
    /// same code then runs from other machine code, with other frames. Measured here,
    /// nested-json serialize on 512 KiB: 360 levels from the bundle's strain, 358 from
    /// `swift build -c release`'s, and 358 from a standalone program built by `swiftc -O`.
    static let foundationLinkedStatically: Bool = dlopen("libFoundation.so", RTLD_LAZY | RTLD_NOLOAD) == nil

    /// What the answers were measured on, said with every answer: the build (a debug
    /// build fits up to 30 % fewer levels than release: Yams' flow parser 233 against
    /// 334 on 512 KiB) and how the probes ran (a copy of the trial server starts a
    /// little shallower than a program of its own: nested-json serialize completed
    /// 360 on 512 KiB as a copy, 358 spawned and as a standalone program), and, spawned,
    /// whether Foundation was linked in statically.
    static func measuredOn(isolation: TrialIsolation?, build: String, foundationLinkedStatically: Bool = BisectController.foundationLinkedStatically) -> String {
        let probes: String
        switch isolation {
        case .spawn?:
            probes = "in spawned trials, as a program of its own starts"
                + (foundationLinkedStatically ? " when it links Swift's runtime and Foundation statically, as this strain does (the release bundle); one that loads them as shared libraries (swift build's default) may fit fewer levels: bisect with a strain built as your program is" : "")
        case .server?: probes = "in copies of the trial server, which may fit a level more than a program of its own (--isolation spawn measures what a program sees)"
        case nil: probes = "in probes of a runner of its own"
        }
        let advice = build == "release" ? "" : "; a release build of the same code usually fits more, so bisect a release build (swift build -c release) for the figure to ship"
        return "Measured on a \(build) build, \(probes)\(advice)."
    }

    /// The line through the first two searches' boundaries, when both found one and
    /// both failed there by overflowing the stack. A boundary where the code threw (a
    /// depth limit, such as JSONDecoder's 512) does not move with the stack: a line
    /// through it measured nothing (2,289 B a level, predicting 3,717 levels on 8 MiB
    /// where the real limit is 512), so there is no slope, and the reports say why.
    static func slope(parameter: String, searches: [BisectSearch], requests: [BisectRequest]) -> StackSlope? {
        guard searches.count >= 2, requests.count >= 2 else { return nil }
        let points = zip(searches.prefix(2), requests.prefix(2)).compactMap { search, request -> BoundaryPoint? in
            guard search.verdict == .boundary || search.verdict == .nondeterministic, let passing = search.passing,
                  search.failedByOverflow else { return nil }
            switch request.question {
            case .stack:
                guard let value = request.parameters[parameter].flatMap(Int.init) else { return nil }
                return BoundaryPoint(value: value, stackBytes: passing)
            case .parameter:
                guard let stack = request.strategy.chosenStackBytes else { return nil }
                return BoundaryPoint(value: passing, stackBytes: stack)
            }
        }
        guard points.count == 2 else { return nil }
        return StackSlope.fit(parameter: parameter, points[0], points[1])
    }

    /// The searches as the suite a run.json records.
    static func suite(_ requests: [BisectRequest]) -> ResolvedSuite {
        let first = requests[0]
        return ResolvedSuite(
            name: "bisect-\(first.scenario)", description: "strain bisect", path: "(strain bisect)",
            repetitions: first.repetitions, timeoutSeconds: first.timeoutSeconds, stallSeconds: first.stallSeconds,
            profiles: [first.profile.rawValue],
            runs: requests.map { request in
                let parameters = request.parameterOrder.compactMap { name -> ParameterSweep? in
                    if case .parameter(name) = request.question { return ParameterSweep(name: name, values: ["\(request.low)…\(request.high)"]) }
                    return request.parameters[name].map { ParameterSweep(name: name, values: [$0]) }
                }
                return ResolvedRun(
                    scenario: request.scenario, parameters: parameters, strategies: [request.strategyName],
                    profiles: [request.profile.rawValue], repetitions: request.repetitions,
                    timeoutSeconds: request.timeoutSeconds, stallSeconds: request.stallSeconds,
                    expect: ["default": ["completed", "stackOverflow"]]
                )
            }
        )
    }
}
