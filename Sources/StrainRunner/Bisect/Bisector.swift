internal import CStrainProbe
import StrainKit
import StrainWire

/// Runs one probe of a bisect: a trial in, its record out. The supervisor (a
/// real child per probe) in a run; a fake with a known boundary in unit tests.
package protocol BisectProbeRunner {
    /// Runs the trial to its end and returns its record; never throws (a crash is an outcome).
    func run(_ spec: TrialSpec) -> TrialRecord
}

extension TrialSupervisor: BisectProbeRunner {}

/// Finds the boundary between completing and failing by experiment: brackets
/// it (a ladder of stacks, or doubling a parameter), bisects it to one unit with
/// single probes, then confirms both sides with repetitions. Where the
/// repetitions disagree, it finds the range where outcomes mix.
///
/// Completing is assumed to get easier with more stack and harder with a larger
/// parameter; the repetitions are what catch a scenario for which that is not so.
package final class Bisector {
    private let runner: any BisectProbeRunner
    /// Every probe run so far, in order: the run's trials.
    package private(set) var trials: [TrialRecord] = []
    /// Hears of each probe as it ends.
    private let progress: (TrialRecord) -> Void

    /// A bisector whose probes run on `runner`, numbered from `firstIndex`.
    package init(runner: any BisectProbeRunner, firstIndex: Int = 0, progress: @escaping (TrialRecord) -> Void = { _ in }) {
        self.runner = runner
        self.progress = progress
        self.nextIndex = firstIndex
    }

    private var nextIndex: Int

    /// Why a search stopped without an answer.
    package struct HarnessFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Runs one search to its answer.
    package func search(_ request: BisectRequest) throws(HarnessFailure) -> BisectSearch {
        var state = SearchState(request: request)
        let started = strain_monotonic_ns()
        let verdict = try find(&state)
        let seconds = Double(strain_monotonic_ns() - started) / 1e9
        return state.record(verdict, wallSeconds: seconds)
    }

    // MARK: - The search

    private func find(_ state: inout SearchState) throws(HarnessFailure) -> SearchState.Answer {
        let request = state.request
        // 1. Bracket the boundary: a passing and a failing value.
        var passing: Int
        var failing: Int
        switch request.question {
        case .stack:
            let first = min(max(BisectRequest.firstStackBytes, request.low), request.high)
            if try probe(first, &state).passed {
                if first == request.low { return .alwaysCompletes(request.low) }
                if try probe(request.low, &state).passed { return .alwaysCompletes(request.low) }
                (passing, failing) = (first, request.low)
            } else {
                var previous = first
                var found: Int?
                let ladder = BisectRequest.stackLadder.filter { $0 > first && $0 < request.high } + [request.high]
                for size in ladder where size > previous {
                    if try probe(size, &state).passed {
                        found = size
                        break
                    }
                    previous = size
                    if !request.exhaustive, state.unboundedEvidence != nil { return .unbounded }
                }
                guard let found else {
                    return state.unboundedEvidence != nil ? .unbounded : .neverCompletes(request.high)
                }
                (passing, failing) = (found, previous)
            }
        case .parameter:
            guard try probe(request.low, &state).passed else { return .neverCompletes(request.low) }
            var value = request.low
            var found: Int?
            while value < request.high {
                let next = min(request.high, max(value * 2, value + 1))
                if !(try probe(next, &state).passed) {
                    found = next
                    break
                }
                value = next
            }
            guard let found else { return .alwaysCompletes(request.high) }
            (passing, failing) = (value, found)
        }

        // 2. Bisect to one unit, one probe per value.
        (passing, failing) = try narrow(passing: passing, failing: failing, &state) { result in result.passed }

        // 3. Confirm both sides with repetitions.
        let passSide = try repeated(passing, &state)
        let failSide = try repeated(failing, &state)
        if passSide.allSatisfy(\.passed) && !failSide.contains(where: \.passed) {
            return .boundary(passing: passing, failing: failing)
        }

        // 4. Outcomes mix: find where every repetition completes, and where none does.
        let unit = request.unit
        let easier = passing > failing ? unit : -unit
        let easyEnd = easier > 0 ? request.high : request.low
        let hardEnd = easier > 0 ? request.low : request.high
        let alwaysPasses = try edge(from: passing, step: easier, end: easyEnd, &state) { $0.allSatisfy(\.passed) }
        let neverPasses = try edge(from: failing, step: -easier, end: hardEnd, &state) { !$0.contains(where: \.passed) }
        return .nondeterministic(alwaysPasses: alwaysPasses, neverPasses: neverPasses)
    }

    /// Bisects between a passing and a failing value until they are one unit apart.
    private func narrow(passing: Int, failing: Int, _ state: inout SearchState,
                        single: (ProbeResult) -> Bool) throws(HarnessFailure) -> (Int, Int) {
        var passing = passing
        var failing = failing
        let unit = state.request.unit
        while abs(passing - failing) > unit, state.probeCount < BisectRequest.probeBudget {
            let middle = failing + (passing - failing) / unit / 2 * unit
            if single(try probe(middle, &state)) { passing = middle } else { failing = middle }
        }
        return (passing, failing)
    }

    /// From `start` (where the repetitions mixed), the nearest value in the
    /// direction of `step` whose every repetition satisfies `holds`: gallop, then bisect.
    private func edge(from start: Int, step: Int, end: Int, _ state: inout SearchState,
                      holds: ([ProbeResult]) -> Bool) throws(HarnessFailure) -> Int? {
        if holds(try repeated(start, &state)) { return start }
        var inside = start
        var distance = abs(step)
        while state.probeCount < BisectRequest.probeBudget {
            var candidate = start + (step > 0 ? distance : -distance)
            if step > 0 ? candidate >= end : candidate <= end { candidate = end }
            if holds(try repeated(candidate, &state)) {
                var outside = candidate
                while abs(outside - inside) > abs(step), state.probeCount < BisectRequest.probeBudget {
                    let middle = inside + (outside - inside) / abs(step) / 2 * abs(step)
                    if holds(try repeated(middle, &state)) { outside = middle } else { inside = middle }
                }
                return outside
            }
            if candidate == end { return nil }
            inside = candidate
            distance *= 2
        }
        return nil
    }

    /// The results at `value`, run until there are as many as the request's repetitions.
    private func repeated(_ value: Int, _ state: inout SearchState) throws(HarnessFailure) -> [ProbeResult] {
        while state.results[value, default: []].count < state.request.repetitions {
            _ = try probe(value, &state)
        }
        return state.results[value]!
    }

    /// Runs one more trial at `value`.
    @discardableResult
    private func probe(_ value: Int, _ state: inout SearchState) throws(HarnessFailure) -> ProbeResult {
        let request = state.request
        let repetition = state.results[value, default: []].count + 1
        let spec = TrialSpec(
            index: nextIndex, id: TrialID(key: request.key(at: value), repetition: repetition), seed: request.seed,
            timeoutSeconds: request.timeoutSeconds, stallSeconds: request.stallSeconds,
            expected: [ExpectedOutcome(kind: .completed), ExpectedOutcome(kind: .stackOverflow)]
        )
        nextIndex += 1
        let record = runner.run(spec)
        trials.append(record)
        progress(record)
        if record.outcome.kind == .harnessError {
            throw HarnessFailure(description: "the probe \(spec.name) ended in a harness error: \(record.outcome.message ?? "no message")")
        }
        let result = ProbeResult(value: value, record: record)
        state.add(result)
        return result
    }
}

/// One probe's result as the search reads it.
struct ProbeResult {
    var value: Int
    var record: TrialRecord
    var passed: Bool { record.outcome.kind == .completed }
}

/// What one search has seen so far.
struct SearchState {
    let request: BisectRequest
    var results: [Int: [ProbeResult]] = [:]
    var order: [Int] = []
    var probeCount: Int { order.count }

    init(request: BisectRequest) { self.request = request }

    mutating func add(_ result: ProbeResult) {
        results[result.value, default: []].append(result)
        order.append(result.record.index)
    }

    enum Answer {
        case boundary(passing: Int, failing: Int)
        case nondeterministic(alwaysPasses: Int?, neverPasses: Int?)
        case unbounded
        case alwaysCompletes(Int)
        case neverCompletes(Int)
    }

    /// Stack overflows by stack size, smallest first: one per size.
    var overflows: [OverflowEvidence] {
        guard case .stack = request.question else { return [] }
        return results.keys.sorted().compactMap { size in
            guard let trial = results[size]?.first(where: { $0.record.outcome.kind == .stackOverflow })?.record else { return nil }
            return OverflowEvidence(
                stackBytes: size, frames: trial.metrics.frames,
                cycle: trial.trace?.cycle.map { $0.frames.map { $0.symbol ?? "?" } },
                repetitions: trial.trace?.cycle?.repetitions, depth: trial.metrics.depth
            )
        }
    }

    /// The overflows, when they say no stack is enough: at least three sizes up to
    /// 64 MiB or more, every one in the same cycle, frames growing with the stack
    /// and in proportion to it (frames per byte within a factor of two).
    var unboundedEvidence: [OverflowEvidence]? {
        let seen = overflows
        guard seen.count >= BisectRequest.unboundedEvidenceSizes,
              let largest = seen.last, largest.stackBytes >= BisectRequest.unboundedEvidenceBytes,
              results.values.joined().allSatisfy({ $0.record.outcome.kind == .stackOverflow }) else { return nil }
        let cycles = Set(seen.map { Set($0.cycle ?? []) })
        guard cycles.count == 1, let cycle = cycles.first, !cycle.isEmpty else { return nil }
        let frames = seen.compactMap(\.frames)
        guard frames.count == seen.count, zip(frames, frames.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        let density = zip(seen, frames).map { Double($1) / Double($0.stackBytes) }
        guard let least = density.min(), let most = density.max(), most <= least * 2 else { return nil }
        return seen
    }

    func record(_ answer: Answer, wallSeconds: Double) -> BisectSearch {
        let request = request
        var verdict: BisectSearch.Verdict
        var passing: Int?
        var failing: Int?
        var mixedLow: Int?
        var mixedHigh: Int?
        switch answer {
        case .boundary(let pass, let fail):
            verdict = .boundary
            (passing, failing) = (pass, fail)
        case .nondeterministic(let always, let never):
            verdict = .nondeterministic
            (passing, failing) = (always, never)
            let mixed = results.filter { _, runs in runs.contains(where: \.passed) && runs.contains(where: { !$0.passed }) }.keys
            mixedLow = mixed.min()
            mixedHigh = mixed.max()
        case .unbounded:
            verdict = .unbounded
        case .alwaysCompletes(let value):
            verdict = .alwaysCompletes
            passing = value
        case .neverCompletes(let value):
            verdict = .neverCompletes
            failing = value
        }
        let failedProbe = failing.flatMap { value in results[value]?.first { !$0.passed }?.record }
            ?? results.values.joined().first { !$0.passed }?.record
        let failure = failedProbe.map { trial in
            trial.outcome.message.map { "\(trial.outcome.description): \($0.prefix(200))" } ?? trial.outcome.description
        }
        let search = BisectSearch(
            question: { if case .stack = request.question { return .stack } else { return .parameter } }(),
            scenario: request.scenario, parameters: request.fixedParameters,
            parameter: { if case .parameter(let name) = request.question { return name } else { return nil } }(),
            strategy: request.strategyName, profile: request.profile.rawValue, unit: request.unit,
            low: request.low, high: request.high, repetitions: request.repetitions, verdict: verdict,
            passing: passing, failing: failing, mixedLow: mixedLow, mixedHigh: mixedHigh, failure: failure,
            depthAtFailure: failedProbe?.metrics.depth, overflows: overflows, probes: order, wallSeconds: wallSeconds,
            explanation: ""
        )
        var explained = search
        explained.explanation = BisectExplanation.sentence(for: search, results: results)
        return explained
    }
}
