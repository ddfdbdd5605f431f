import Foundation
import StrainRecords
import StrainText

/// Time and memory against a numeric parameter swept over three or more values,
/// with the power law fitted to each strategy's line: what the HTML charts, and
/// what the terminal and summary.md state in a line.
///
/// Only completed trials are points: a trial that threw, overflowed or timed out stopped
/// partway (a deepest point that threw in 0.67 ms read `time ∝ depth^-0.3`, not `depth^3.0`).
/// Each line counts what it left out, and the fit says so.
///
/// Time is fitted as measured. Peak RSS is fitted only after subtracting the
/// process's own baseline (the median peak RSS of the run's `noop` trials on the
/// same profile): the runtime's ~20 MiB would otherwise flatten any exponent.
/// Without a `noop` trial, memory is charted but not fitted, and the report says so.
package struct GrowthSweep: Sendable {
    package struct Line: Sendable {
        /// `thread(64MiB) linux`.
        package var name: String
        package var points: [(x: Double, y: Double)]
        package var fit: GrowthFit?
        /// Trials of this line that did not complete, left out of its points.
        package var leftOut = 0

        /// A fit's sentence, with what the line left out.
        func sentence(_ fit: GrowthFit, of what: String, over parameter: String) -> String {
            let note = leftOut == 0 ? "" : " (\(leftOut) \(leftOut == 1 ? "trial" : "trials") that did not complete left out)"
            return "\(name): \(fit.description(of: what, over: parameter))\(note)"
        }
    }

    package var scenario: String
    /// The swept parameter.
    package var parameter: String
    /// The other parameters, held fixed: `operation=archive, shape=league`.
    package var fixed: String
    package var time: [Line]
    package var memory: [Line]
    /// The baseline subtracted from peak RSS before fitting, when the run had one.
    package var memoryBaselineBytes: Double?

    /// `cyclic-graph[operation=archive, shape=league]: growth with size`, the fixed parameters as a key writes them.
    package var title: String { "\(scenario)\(fixed.isEmpty ? "" : "[\(fixed)]"): growth with \(parameter)" }

    /// One sentence per line fitted: `thread(64MiB) linux: time ∝ size^1.7, R² 0.99`.
    package var fitLines: [String] {
        var lines = time.compactMap { line in line.fit.map { line.sentence($0, of: "time", over: parameter) } }
        if let baseline = memoryBaselineBytes {
            lines += memory.compactMap { line in
                line.fit.map { line.sentence($0, of: "peak RSS above the \(Format.bytes(baseline)) baseline", over: parameter) }
            }
        } else if !memory.isEmpty {
            lines.append("peak RSS not fitted: it includes the process's own baseline, and the run has no noop trial to measure it")
        }
        return lines
    }

    /// The sweeps of a run, scenario by scenario.
    package static func sweeps(_ run: RunRecord) -> [GrowthSweep] {
        let scenarios = run.trials.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        var baselines: [Profile: Double] = [:]
        for profile in Set(run.trials.map(\.profile)) { baselines[profile] = baseline(run, profile: profile) }
        return scenarios.flatMap { scenario in sweeps(run.trials.filter { $0.scenario == scenario }, baselines: baselines) }
    }

    /// The median peak RSS of the run's `noop` trials on `profile`.
    static func baseline(_ run: RunRecord, profile: Profile) -> Double? {
        Statistics.median(run.trials.filter { $0.scenario == "noop" && $0.profile == profile && $0.outcome.kind == .completed }
            .compactMap { $0.metrics.peakRSSBytes.map(Double.init) })
    }

    static func sweeps(_ trials: [TrialRecord], baselines: [Profile: Double]) -> [GrowthSweep] {
        var result: [GrowthSweep] = []
        let names = trials.flatMap { $0.key.parameters.map(\.name) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for name in names {
            let values = Set(trials.compactMap { number($0.key[parameter: name]) })
            guard values.count >= 3 else { continue }
            // The other parameters, held fixed: one sweep per combination of them.
            func others(_ trial: TrialRecord) -> Set<TrialKey.Parameter> { Set(trial.key.parameters.filter { $0.name != name }) }
            var rest: [Set<TrialKey.Parameter>] = []
            for trial in trials where !rest.contains(others(trial)) { rest.append(others(trial)) }
            for fixed in rest {
                let members = trials.filter { others($0) == fixed && number($0.key[parameter: name]) != nil }
                guard let first = members.first else { continue }
                struct Line: Hashable {
                    var strategy: StrategySpec
                    var profile: Profile
                }
                let lines = members.map { Line(strategy: $0.strategy, profile: $0.profile) }.reduce(into: [Line]()) { if !$0.contains($1) { $0.append($1) } }
                var baselineBytes: Double?
                func series(_ metric: (TrialRecord) -> Double?, subtract: [Profile: Double]?) -> [GrowthSweep.Line] {
                    lines.compactMap { line in
                        let all = members.filter { Line(strategy: $0.strategy, profile: $0.profile) == line }
                        let completed = all.filter { $0.outcome.kind == .completed }
                        let byValue = Dictionary(grouping: completed) { number($0.key[parameter: name])! }
                        let points = byValue.keys.sorted().compactMap { x in Statistics.median(byValue[x]!.compactMap(metric)).map { (x: x, y: $0) } }
                        guard points.count >= 2 else { return nil }
                        var fit = subtract == nil ? GrowthFit(points) : nil
                        if let subtract, let base = subtract[line.profile] {
                            baselineBytes = base
                            fit = GrowthFit(points.map { (x: $0.x, y: $0.y - base) })
                        }
                        return GrowthSweep.Line(name: "\(line.strategy) \(line.profile.rawValue)", points: points, fit: fit, leftOut: all.count - completed.count)
                    }
                }
                let time = series({ $0.metrics.wallSeconds }, subtract: nil)
                let memory = series({ $0.metrics.peakRSSBytes.map(Double.init) }, subtract: baselines)
                guard !time.isEmpty || !memory.isEmpty else { continue }
                var fixedKey = first.key
                fixedKey.parameters.removeAll { $0.name == name }
                let fixedText = fixedKey.parameterSummary
                result.append(GrowthSweep(scenario: first.scenario, parameter: name, fixed: fixedText, time: time, memory: memory,
                                          memoryBaselineBytes: baselineBytes))
            }
        }
        return result
    }

    /// A parameter value as a finite number (`nan` and `inf` parse, but are not points).
    static func number(_ text: String?) -> Double? {
        text.flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
    }
}
