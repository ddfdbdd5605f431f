import Foundation
import StrainRecords

/// How a gate compares.
package struct GateOptions: Sendable {
    package var mode: GateReport.Mode
    /// The false-discovery level across every tested row-metric.
    package var q: Double
    /// Compare across machines whose hard fingerprint fields differ (timings are then not judged).
    package var allowFingerprintMismatch: Bool
    /// Compare timings although the two runs ran their trials differently: a
    /// different `--jobs`, or spawned trials against copies of a trial server.
    package var allowExecutionMismatch: Bool
    /// Calibrated δ per row-metric (`TrialKey.canonicalText|metric`), for cross-run timings.
    package var calibration: [String: Double]
    /// The stored baseline's name, for the report.
    package var baselineName: String?

    package init(mode: GateReport.Mode, q: Double = 0.05, allowFingerprintMismatch: Bool = false, allowExecutionMismatch: Bool = false,
                calibration: [String: Double] = [:], baselineName: String? = nil) {
        self.mode = mode
        self.q = q
        self.allowFingerprintMismatch = allowFingerprintMismatch
        self.allowExecutionMismatch = allowExecutionMismatch
        self.calibration = calibration
        self.baselineName = baselineName
    }

    /// The key a calibrated δ is stored under.
    package static func calibrationKey(_ key: TrialKey, _ metric: String) -> String { "\(key.canonicalText)|\(metric)" }
}

/// A gate that cannot decide because its input is wrong (exit 2) or incomplete (exit 3).
package struct GateError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable {
        /// Usage or input: a bad or missing baseline, an unsupported schema, a refused fingerprint.
        case input
        /// The harness failed or the data is incomplete.
        case incomplete
        /// A side's run refused to start: a tool its counted measure needs is missing (exit 4).
        case toolMissing
    }

    package var kind: Kind
    package var description: String

    package init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// The decision rule: outcomes and deterministic metrics exactly, timings by a
/// δ-shifted one-sided Mann-Whitney test with Benjamini-Hochberg across every tested
/// row-metric (research/gate.md measured why).
package enum Gate {
    package static func compare(baseline: RunRecord, candidate: RunRecord, options: GateOptions) throws(GateError) -> GateReport {
        let fingerprint = MachineFingerprint.differences(baseline, candidate)
        let hard = fingerprint.filter(\.hard)
        if options.mode == .crossRun, !hard.isEmpty, !options.allowFingerprintMismatch {
            let fields = hard.map { "\($0.field) (\($0.baseline) → \($0.candidate))" }.joined(separator: ", ")
            throw GateError(.input, "the baseline's machine differs in \(fields); timings from it do not compare. Gate interleaved on one machine, save a baseline from this machine, or pass --allow-fingerprint-mismatch to judge outcomes and deterministic metrics only")
        }
        // A record without `execution` predates the trial server and --jobs: spawned, one at a time.
        let before = baseline.execution ?? ExecutionRecord(isolation: .spawn)
        let after = candidate.execution ?? ExecutionRecord(isolation: .spawn)
        if before.jobs != after.jobs, !options.allowExecutionMismatch {
            throw GateError(.input, "the baseline ran \(before.jobs) trial\(before.jobs == 1 ? "" : "s") at once and the candidate \(after.jobs) (--jobs): trials that share the cores slow each other, so their timings do not compare. Run both with the same --jobs, or pass --allow-execution-mismatch to compare them anyway")
        }
        var timingsBlocked: String?
        if options.mode == .crossRun, !hard.isEmpty {
            timingsBlocked = "the machines differ in \(hard.map(\.field).joined(separator: ", ")): timings not compared"
        } else if before.isolation != after.isolation, !options.allowExecutionMismatch {
            // A copy of the trial server touches fewer pages than a spawned child.
            timingsBlocked = "the baseline's trials were started by \(before.isolation.rawValue) and the candidate's by \(after.isolation.rawValue) (--isolation), which changes a trial's peak RSS: timings not compared (--allow-execution-mismatch compares them)"
        }

        let baselineByKey = Dictionary(grouping: baseline.trials, by: \.key)
        let candidateByKey = Dictionary(grouping: candidate.trials, by: \.key)
        var keys: [TrialKey] = []
        var seen = Set<TrialKey>()
        for trial in candidate.trials + baseline.trials where seen.insert(trial.key).inserted { keys.append(trial.key) }

        var descriptors = candidate.metricDescriptors
        for descriptor in baseline.metricDescriptors where !descriptors.contains(where: { $0.name == descriptor.name }) {
            descriptors.append(descriptor)
        }
        descriptors.removeAll { $0.polarity == nil }
        // Counted rows first, then the other exact ones, then timings: the order every
        // output lists a row's metrics in, most trustworthy first.
        descriptors = descriptors.enumerated().sorted { ($0.element.noise.listOrder, $0.offset) < ($1.element.noise.listOrder, $1.offset) }.map(\.element)

        // First pass: outcomes, deterministic metrics, and the timing tests to run.
        var rows: [RowComparison] = []
        var pending: [(row: Int, metric: Int, oriented: (baseline: [Double], candidate: [Double]))] = []
        for key in keys {
            let old = baselineByKey[key] ?? []
            let new = candidateByKey[key] ?? []
            var row = RowComparison(
                key: key, verdict: .unchanged, baselineOutcomes: histogram(old), candidateOutcomes: histogram(new),
                outcomeReason: nil, metrics: [], suiteLine: suiteLine(of: key, in: candidate) ?? suiteLine(of: key, in: baseline)
            )
            if old.isEmpty {
                row.verdict = .new
                row.outcomeReason = "in the candidate only"
            } else if new.isEmpty {
                row.verdict = .missing
                row.outcomeReason = "in the baseline, not in the candidate: the candidate's data is incomplete"
            } else if let error = (new + old).first(where: { $0.outcome.kind == .harnessError }) {
                row.verdict = .harnessError
                let side = new.contains(error) ? "candidate" : "baseline"
                row.outcomeReason = "the harness failed in the \(side): \(error.outcome.message ?? "no message")"
            } else {
                (row.verdict, row.outcomeReason) = outcomeVerdict(baseline: old, candidate: new)
                let reference = referenceKind(old)
                for descriptor in descriptors {
                    let metricIndex = row.metrics.count
                    let threshold = self.threshold(for: descriptor, key: key, in: candidate)
                    if descriptor.noise.isExact {
                        guard let reference else { continue }
                        let before = old.filter { $0.outcome.kind == reference }.compactMap { $0.metrics.value(of: descriptor.name) }.filter(\.isFinite)
                        let after = new.filter { $0.outcome.kind == reference }.compactMap { $0.metrics.value(of: descriptor.name) }.filter(\.isFinite)
                        if descriptor.noise == .counted, !before.isEmpty, after.isEmpty, new.contains(where: { $0.outcome.kind == reference }) {
                            // A count the candidate lost is shown, not left out of the row: it used to drop
                            // out silently, and the row passed on the metrics that were left.
                            row.metrics.append(Self.notCounted(descriptor, before, candidateRepetitions: new.filter { $0.outcome.kind == reference }.count, threshold))
                            continue
                        }
                        if descriptor.noise == .counted, before.isEmpty, !after.isEmpty, old.contains(where: { $0.outcome.kind == reference }) {
                            // A count only the candidate has is shown too: nothing to judge it against.
                            row.metrics.append(Self.notCountedOnBaseline(descriptor, after, baselineRepetitions: old.filter { $0.outcome.kind == reference }.count, threshold))
                            continue
                        }
                        guard !before.isEmpty, !after.isEmpty else { continue }
                        var comparison = deterministic(descriptor, before, after, threshold)
                        if descriptor.noise == .counted, let workers = Self.concurrentWorkers(old + new) {
                            // Which worker misses a shared cache first, or grows a shared array,
                            // depends on the interleaving, and so do its allocations: the example's
                            // order-cache counted 267.7 KiB in both baseline repetitions and 297.7 KiB
                            // in both candidate ones of a harmless pull request.
                            comparison.verdict = .inconclusive
                            comparison.grewAt = nil
                            comparison.reason = "counted, but not judged: the work ran on \(workers) workers at once, and what they and their pool allocate depends on the interleaving"
                        }
                        if descriptor.name == "instructions", comparison.verdict == .regressed {
                            let grew = InstructionGrowth.functions(baseline: old.filter { $0.outcome.kind == reference }, candidate: new.filter { $0.outcome.kind == reference })
                            if !grew.isEmpty {
                                comparison.grewAt = grew
                                comparison.reason += "; grew most in \(grew[0])"
                            }
                        }
                        if descriptor.name == "allocations", comparison.verdict == .regressed {
                            let grew = AllocationGrowth.sites(baseline: old.filter { $0.outcome.kind == reference }, candidate: new.filter { $0.outcome.kind == reference })
                            if !grew.isEmpty {
                                comparison.grewAt = grew
                                comparison.reason += "; grew most at \(grew[0])"
                            }
                        }
                        row.metrics.append(comparison)
                    } else {
                        // NaN says nothing: that repetition is left out, not the metric.
                        let before = old.filter { $0.outcome.kind == .completed }.compactMap { $0.metrics.value(of: descriptor.name) }.filter { !$0.isNaN }
                        let after = new.filter { $0.outcome.kind == .completed }.compactMap { $0.metrics.value(of: descriptor.name) }.filter { !$0.isNaN }
                        guard !before.isEmpty, !after.isEmpty else { continue }
                        var comparison = timingSkeleton(descriptor, before, after, threshold)
                        if let timingsBlocked {
                            comparison.verdict = .inconclusive
                            comparison.reason = timingsBlocked
                        } else if options.mode == .crossRun {
                            if let calibrated = options.calibration[GateOptions.calibrationKey(key, descriptor.name)] {
                                if calibrated > comparison.delta {
                                    comparison.delta = calibrated
                                    comparison.thresholdSource = "calibration"
                                }
                            } else {
                                comparison.verdict = .inconclusive
                                comparison.reason = "a cross-run \(GateReport.measuredNoun(descriptor.unit)) \(GateReport.uncalibratedWords)"
                            }
                        }
                        if comparison.verdict != .inconclusive {
                            // On a log scale a zero is clamped to a tiny positive value, so a
                            // throughput that drops to 0 is the worst a rank can be, not ignored.
                            let orient: (Double) -> Double = descriptor.polarity == .higherIsBetter ? { 1 / Self.clamped($0) } : { Self.clamped($0) }
                            pending.append((rows.count, metricIndex, (before.map(orient), after.map(orient))))
                        }
                        row.metrics.append(comparison)
                    }
                }
            }
            rows.append(row)
        }

        // Second pass: the tests, with Benjamini-Hochberg across every tested row-metric.
        let required = GateStatistics.minimumRepetitions(rows: max(1, pending.count), q: options.q)
        var tested: [(row: Int, metric: Int, worse: Double, better: Double, ratio: Double)] = []
        for item in pending {
            var comparison = rows[item.row].metrics[item.metric]
            let (before, after) = item.oriented
            let floorP = smallestPValue(before.count, after.count)
            guard floorP <= options.q / Double(max(1, pending.count)) else {
                comparison.verdict = .inconclusive
                comparison.reason = "too few repetitions to judge: needs ≥ \(required) per side (has \(before.count) and \(after.count))"
                rows[item.row].metrics[item.metric] = comparison
                continue
            }
            guard let worse = GateStatistics.shiftedMannWhitney(baseline: before, candidate: after, delta: comparison.delta),
                  let better = GateStatistics.shiftedMannWhitney(baseline: after, candidate: before, delta: comparison.delta),
                  let ratio = GateStatistics.hodgesLehmannRatio(baseline: before, candidate: after) else {
                comparison.verdict = .notGated
                comparison.reason = "the values could not be tested"
                rows[item.row].metrics[item.metric] = comparison
                continue
            }
            // With ties the normal approximation can go below what any arrangement of
            // these sizes can reach; a p-value never claims more than the exact floor.
            let worseP = max(worse.pValue, floorP)
            let betterP = max(better.pValue, floorP)
            comparison.pValue = worseP
            rows[item.row].metrics[item.metric] = comparison
            tested.append((item.row, item.metric, worseP, betterP, ratio))
        }
        let worseQ = GateStatistics.benjaminiHochberg(tested.map(\.worse))
        let betterQ = GateStatistics.benjaminiHochberg(tested.map(\.better))
        for (index, test) in tested.enumerated() {
            var comparison = rows[test.row].metrics[test.metric]
            comparison.qValue = worseQ[index]
            let absolute = abs((comparison.candidateMedian ?? 0) - (comparison.baselineMedian ?? 0))
            let change = String(format: "%.1f%% (%@ → %@)", abs(comparison.changePercent ?? 0),
                                format(comparison.baselineMedian ?? 0, comparison.unit), format(comparison.candidateMedian ?? 0, comparison.unit))
            if worseQ[index] <= options.q, test.ratio > 1 + comparison.delta, absolute > comparison.floor {
                comparison.verdict = .regressed
                comparison.reason = "worse by \(change), beyond δ \(percent(comparison.delta)) (q \(String(format: "%.3g", worseQ[index])))"
            } else if betterQ[index] <= options.q, test.ratio < 1 / (1 + comparison.delta), absolute > comparison.floor {
                comparison.verdict = .improved
                comparison.reason = "better by \(change), beyond δ \(percent(comparison.delta))"
            } else if test.ratio > 1 + comparison.delta, absolute > comparison.floor {
                // The estimate is a slowdown beyond δ that the noise leaves unproven:
                // calling it unchanged would claim what the data does not show.
                comparison.verdict = .inconclusive
                comparison.reason = "estimated worse by \(change), beyond δ \(percent(comparison.delta)), but not beyond the noise (q \(String(format: "%.3g", worseQ[index]))); more repetitions would decide"
            } else {
                comparison.verdict = .unchanged
                comparison.reason = "within δ \(percent(comparison.delta)) (changed \(change))"
            }
            rows[test.row].metrics[test.metric] = comparison
        }
        for index in rows.indices where ![.new, .missing, .harnessError].contains(rows[index].verdict) {
            let worst = rows[index].metrics.map(\.verdict).max { $0.severity < $1.severity }
            if let worst, worst.severity > rows[index].verdict.severity { rows[index].verdict = worst }
        }

        var counts: [String: Int] = [:]
        for row in rows { counts[row.verdict.rawValue, default: 0] += 1 }
        let incomplete = rows.contains { $0.verdict == .missing || $0.verdict == .harnessError }
        let failed = rows.contains { $0.verdict == .regressed || $0.verdict == .outcomeChanged }
        let exitCode: Int32 = incomplete ? 3 : failed ? 1 : 0
        let summary = GateVerdict.allCases.compactMap { verdict in counts[verdict.rawValue].map { "\($0) \(verdict.label)" } }.joined(separator: ", ")
        let conclusion = switch exitCode {
        case 3: "incomplete: \(summary)"
        case 1: "failed: \(summary)"
        default: "passed: \(summary)"
        }
        let warnings = [SuiteDifference.warning(baseline: baseline.suite, candidate: candidate.suite),
                        SuiteDifference.stackLimitWarning(baseline: baseline.environment, candidate: candidate.environment)].compactMap { $0 }
        return GateReport(
            mode: options.mode, suite: candidate.suite.name, suitePath: candidate.suite.path,
            baselineCommit: baseline.environment.gitCommit, candidateCommit: candidate.environment.gitCommit,
            baselineBuild: baseline.environment.build, candidateBuild: candidate.environment.build,
            warnings: warnings.isEmpty ? nil : warnings,
            baselineName: options.baselineName, candidateHost: candidate.environment.host, q: options.q, requiredRepetitions: required, fingerprint: fingerprint,
            rows: rows, counts: counts, exitCode: exitCode, conclusion: conclusion
        )
    }

    /// `completed: 9, crashed(SIGABRT): 1`.
    static func histogram(_ trials: [TrialRecord]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for trial in trials { counts[trial.outcome.description, default: 0] += 1 }
        return counts
    }

    /// The outcome kind whose metrics compare: the baseline's most common ending,
    /// when it is one that measures (completed, or an overflow's frames and depth).
    static func referenceKind(_ trials: [TrialRecord]) -> TrialOutcome.Kind? {
        let kinds = Dictionary(grouping: trials, by: \.outcome.kind).mapValues(\.count)
        guard let (kind, _) = kinds.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key.rawValue > $1.key.rawValue) }) else { return nil }
        return [.completed, .stackOverflow].contains(kind) ? kind : nil
    }

    /// Outcomes fail whatever the timings say:
    /// - an outcome the baseline never had that the suite does not expect;
    /// - an unexpected outcome where every baseline repetition was expected;
    /// - a failing outcome new to a row that expects one outcome (a row whose suite
    ///   expects several, a race, may show any of them);
    /// - more unexpected, or fewer completed, repetitions than the baseline had,
    ///   beyond chance (one-sided Fisher exact test at 0.05: a row that mostly
    ///   completed and now never does).
    /// A row that completes where it failed is fixed.
    static func outcomeVerdict(baseline: [TrialRecord], candidate: [TrialRecord]) -> (GateVerdict, String?) {
        let before = Set(baseline.map(\.outcome.description))
        let appeared = Set(candidate.map(\.outcome.description)).subtracting(before)
        for name in appeared.sorted() where candidate.contains(where: { $0.outcome.description == name && !$0.expected }) {
            return (.outcomeChanged, "\(name) is new and not what the suite expects; the baseline ended only in \(before.sorted().joined(separator: ", "))")
        }
        if baseline.allSatisfy(\.expected), let first = candidate.first(where: { !$0.expected }) {
            return (.outcomeChanged, "\(first.outcome) is not what the suite expects; the baseline's outcomes all were")
        }
        let expectsSeveral = Set(candidate.flatMap(\.expectedOutcomes)).count > 1
        let worse = appeared.filter { $0 != TrialOutcome.Kind.completed.rawValue }
        if !expectsSeveral, let first = worse.sorted().first {
            return (.outcomeChanged, "\(first) is new: the baseline ended only in \(before.sorted().joined(separator: ", "))")
        }
        let unexpected = (baseline.filter { !$0.expected }.count, candidate.filter { !$0.expected }.count)
        if fisherRise(unexpected.0, of: baseline.count, to: unexpected.1, of: candidate.count) < 0.05 {
            return (.outcomeChanged, "unexpected outcomes rose from \(unexpected.0) of \(baseline.count) to \(unexpected.1) of \(candidate.count) repetitions")
        }
        let failing = (baseline.filter { $0.outcome.kind != .completed }.count, candidate.filter { $0.outcome.kind != .completed }.count)
        if failing.0 < baseline.count, fisherRise(failing.0, of: baseline.count, to: failing.1, of: candidate.count) < 0.05 {
            return (.outcomeChanged, "completions fell from \(baseline.count - failing.0) of \(baseline.count) to \(candidate.count - failing.1) of \(candidate.count) repetitions")
        }
        if appeared.contains(TrialOutcome.Kind.completed.rawValue), worse.isEmpty {
            return (.fixed, "completes now: the baseline ended in \(before.sorted().joined(separator: ", "))")
        }
        // Passes, but is not "unchanged in every outcome" (a row that overflowed every time
        // and now times out every time, both expected, was listed as such): the reason says so,
        // and the row is shown beside the other changes.
        let after = Set(candidate.map(\.outcome.description))
        if after != before {
            return (.unchanged, "the outcomes changed, each one the suite expects: \(GateReport.histogramText(histogram(baseline))) → \(GateReport.histogramText(histogram(candidate)))")
        }
        return (.unchanged, nil)
    }

    /// One-sided Fisher exact test that `b` events of `n` are more than `a` of `m`
    /// would give by chance: P(X ≥ b) for the hypergeometric draw of n from m + n
    /// trials holding a + b events.
    static func fisherRise(_ a: Int, of m: Int, to b: Int, of n: Int) -> Double {
        guard n > 0, m > 0, b * m > a * n else { return 1 }
        let events = a + b
        let total = m + n
        func logChoose(_ n: Int, _ k: Int) -> Double { lgamma(Double(n) + 1) - lgamma(Double(k) + 1) - lgamma(Double(n - k) + 1) }
        var p = 0.0
        for x in b...min(n, events) where events - x <= m {
            p += exp(logChoose(events, x) + logChoose(total - events, n - x) - logChoose(total, n))
        }
        return min(1, p)
    }

    /// The threshold for `metric` on `key`: the default, then the suite's, then its run's.
    static func threshold(for metric: MetricDescriptor, key: TrialKey, in run: RunRecord) -> (MetricThreshold, String) {
        var threshold = MetricThreshold.defaults(for: metric)
        var source = "default"
        if let suite = run.suite.gate?[metric.name] {
            threshold = threshold.overridden(by: suite)
            source = "suite"
        }
        if let entry = run.suiteEntry(planning: key), let own = entry.gate?[metric.name] {
            threshold = threshold.overridden(by: own)
            source = "run at line \(entry.line.map(String.init) ?? "?")"
        }
        return (threshold, source)
    }

    static func suiteLine(of key: TrialKey, in run: RunRecord) -> Int? { run.suiteEntry(planning: key)?.line }

    /// The most workers one of `trials` started (from their fairness records), when
    /// more than one: their counted metrics depend on the interleaving. Started, not only
    /// those that did operations: in Strain's smoke suite a spin-lock row of 8 workers on
    /// gcd-global, where one worker did all 20,000 operations in every repetition, counted
    /// 187 allocations (384–385 KiB) in 3 baseline repetitions and 188 (413.9 KiB) in a
    /// rerun beside two busy loops: the pool that ran the waiting workers allocated too.
    static func concurrentWorkers(_ trials: [TrialRecord]) -> Int? {
        let most = trials.compactMap { $0.metrics.fairness?.operationsPerWorker.count }.max() ?? 0
        return most > 1 ? most : nil
    }

    /// A counted metric the baseline has and the candidate's trials of the same outcome do not: inconclusive.
    static func notCounted(_ descriptor: MetricDescriptor, _ before: [Double], candidateRepetitions: Int, _ threshold: (MetricThreshold, String)) -> MetricComparison {
        MetricComparison(
            metric: descriptor.name, unit: descriptor.unit, noise: descriptor.noise, polarity: descriptor.polarity,
            baselineMedian: GateStatistics.median(before), candidateMedian: nil, changePercent: nil,
            baselineCount: before.count, candidateCount: 0, delta: threshold.0.delta ?? 0, floor: threshold.0.floor ?? 0,
            thresholdSource: threshold.1, verdict: .inconclusive,
            reason: "not counted on the candidate: the baseline counted it in \(before.count) repetition\(before.count == 1 ? "" : "s"), the candidate in none of its \(candidateRepetitions)",
            baselineSamples: before, candidateSamples: []
        )
    }

    /// A counted metric the candidate has and the baseline's trials of the same outcome do not: inconclusive.
    static func notCountedOnBaseline(_ descriptor: MetricDescriptor, _ after: [Double], baselineRepetitions: Int, _ threshold: (MetricThreshold, String)) -> MetricComparison {
        MetricComparison(
            metric: descriptor.name, unit: descriptor.unit, noise: descriptor.noise, polarity: descriptor.polarity,
            baselineMedian: nil, candidateMedian: GateStatistics.median(after), changePercent: nil,
            baselineCount: 0, candidateCount: after.count, delta: threshold.0.delta ?? 0, floor: threshold.0.floor ?? 0,
            thresholdSource: threshold.1, verdict: .inconclusive,
            reason: "not counted on the baseline: the candidate counted it in \(after.count) repetition\(after.count == 1 ? "" : "s"), the baseline in none of its \(baselineRepetitions)",
            baselineSamples: [], candidateSamples: after
        )
    }

    static func deterministic(_ descriptor: MetricDescriptor, _ before: [Double], _ after: [Double], _ threshold: (MetricThreshold, String)) -> MetricComparison {
        let delta = threshold.0.delta ?? 0
        let floor = threshold.0.floor ?? 0
        let lower = descriptor.polarity != .higherIsBetter
        let sampled = sampledMetrics.contains(descriptor.name)
        // The worst case on each side (the highest of a lower-is-better metric); for a
        // sampled count, whose worst case is a sampling accident, the median.
        let old = sampled ? GateStatistics.median(before)! : lower ? before.max()! : before.min()!
        let new = sampled ? GateStatistics.median(after)! : lower ? after.max()! : after.min()!
        var comparison = MetricComparison(
            metric: descriptor.name, unit: descriptor.unit, noise: descriptor.noise, polarity: descriptor.polarity,
            baselineMedian: old, candidateMedian: new, changePercent: old != 0 ? (new / old - 1) * 100 : nil,
            baselineCount: before.count, candidateCount: after.count, delta: delta, floor: floor,
            thresholdSource: threshold.1, verdict: .unchanged, reason: "",
            baselineSamples: before, candidateSamples: after
        )
        let spread = before.max()! - before.min()!
        let worse = lower ? new - old : old - new
        if descriptor.noise == .counted {
            // Counted: one tolerance, the larger of the floor and δ of the baseline's value,
            // for the baseline's own spread and for the change alike.
            let tolerance = max(floor, delta * abs(old))
            comparison.floor = tolerance
            let change = "\(format(old, descriptor.unit)) → \(format(new, descriptor.unit)) a trial"
            let allowed = "\(format(tolerance, descriptor.unit)) (the larger of \(format(floor, descriptor.unit)) and \(percent(delta)))"
            // Worse only when every candidate repetition is: the candidate's best against the
            // baseline's worst. A count that depends on scheduling (which worker fills a
            // shared cache) can agree across two baseline repetitions by chance and then
            // differ in one candidate repetition: a harmless pull request failed so.
            let best = lower ? after.min()! : after.max()!
            let surelyWorse = lower ? best - old : old - best
            let candidateSpread = after.max()! - after.min()!
            if before.count < 2 {
                // One baseline repetition cannot show that the count repeats: a contended
                // row's allocated bytes (which worker grows the shared array) differed by 8 %
                // between two runs of the smoke suite, and each was its only repetition.
                comparison.verdict = .inconclusive
                comparison.reason = "counted: judged when at least 2 baseline repetitions agree within \(allowed) (has \(before.count))"
            } else if spread > tolerance {
                comparison.verdict = .inconclusive
                comparison.reason = "counted, but varies by \(format(spread, descriptor.unit)) across the baseline's repetitions, more than its tolerance \(allowed)"
            } else if candidateSpread > tolerance {
                comparison.verdict = .inconclusive
                comparison.reason = "counted, but varies by \(format(candidateSpread, descriptor.unit)) across the candidate's repetitions, more than its tolerance \(allowed)"
            } else if surelyWorse > tolerance {
                comparison.verdict = .regressed
                comparison.reason = "\(change), beyond the tolerance \(allowed)"
            } else if -worse > tolerance {
                comparison.verdict = .improved
                comparison.reason = change
            } else {
                comparison.reason = "\(change), within \(allowed)"
            }
            return comparison
        }
        // A sampled count is deterministic only when the baseline shows it: one
        // repetition cannot (a thread explosion's peak was 35 in one smoke run and
        // 102 in the next).
        if sampled, before.count < 2 {
            comparison.verdict = .inconclusive
            comparison.reason = "sampled: gated when at least 2 baseline repetitions agree within \(format(floor, descriptor.unit)) (has \(before.count))"
            return comparison
        }
        // Nor can one candidate repetition: Strain's smoke suite against a baseline of 3
        // agreeing repetitions (1 thread each) saw 4 threads in an overflowing row on
        // gcd-global in a rerun beside two busy loops, and 1 in a quiet one.
        if sampled, after.count < 2 {
            comparison.verdict = .inconclusive
            comparison.reason = "sampled: gated when the candidate has at least 2 repetitions too (has \(after.count))"
            return comparison
        }
        let relative = old != 0 ? abs(worse / old) : .infinity
        let change = "\(format(old, descriptor.unit)) → \(format(new, descriptor.unit))"
        if spread > floor {
            comparison.verdict = .inconclusive
            comparison.reason = "varies by \(format(spread, descriptor.unit)) across the baseline's repetitions, more than its tolerance \(format(floor, descriptor.unit))"
        } else if worse > floor, relative > delta {
            comparison.verdict = .regressed
            comparison.reason = "\(change), beyond the tolerance \(format(floor, descriptor.unit))\(delta > 0 ? " and \(percent(delta))" : "")"
        } else if -worse > floor, relative > delta {
            comparison.verdict = .improved
            comparison.reason = "\(change)"
        } else {
            comparison.reason = "\(change), within \(format(floor, descriptor.unit))"
        }
        return comparison
    }

    /// Deterministic metrics that are sampled, not counted exactly: the parent reads
    /// the thread count every 5 ms, so a worker GCD starts for a moment is seen in
    /// some repetitions and not others (an A/A of 10 repetitions saw 4 and 5).
    static let sampledMetrics: Set<String> = ["peak-threads"]

    static func timingSkeleton(_ descriptor: MetricDescriptor, _ before: [Double], _ after: [Double], _ threshold: (MetricThreshold, String)) -> MetricComparison {
        let old = GateStatistics.median(before)
        let new = GateStatistics.median(after)
        let before = before.map(clamped)
        let after = after.map(clamped)
        let interval = GateStatistics.ratioInterval(baseline: before, candidate: after, confidence: 0.95)
        return MetricComparison(
            metric: descriptor.name, unit: descriptor.unit, noise: descriptor.noise, polarity: descriptor.polarity,
            baselineMedian: old, candidateMedian: new,
            changePercent: old.flatMap { old in new.flatMap { old != 0 ? ($0 / old - 1) * 100 : nil } },
            ratio: GateStatistics.hodgesLehmannRatio(baseline: before, candidate: after),
            ratioLow: interval?.lowerBound, ratioHigh: interval?.upperBound,
            baselineCount: before.count, candidateCount: after.count,
            delta: threshold.0.delta ?? 0.1, floor: threshold.0.floor ?? 0, thresholdSource: threshold.1,
            verdict: .unchanged, reason: "", baselineSamples: before, candidateSamples: after
        )
    }

    /// A value brought onto a log scale: zero and below become a tiny positive
    /// value, infinity the largest finite one.
    static func clamped(_ value: Double) -> Double {
        min(max(value, 1e-12), Double.greatestFiniteMagnitude)
    }

    /// 1 / C(m + n, m): the smallest one-sided p a rank test of these sizes can give.
    static func smallestPValue(_ m: Int, _ n: Int) -> Double {
        exp(lgamma(Double(m) + 1) + lgamma(Double(n) + 1) - lgamma(Double(m + n) + 1))
    }

    static func percent(_ value: Double) -> String { String(format: "%g%%", (value * 1000).rounded() / 10) }

    /// A value with its unit, compactly.
    package static func format(_ value: Double, _ unit: MetricDescriptor.Unit) -> String {
        switch unit {
        // Times and sizes as the run's reports write them (gate.html read `23.84 ms` and a
        // floor of `256.0 KiB` beside reports that say `23.8 ms` and `256 KiB`).
        case .seconds: return DurationText.format(value)
        case .nanoseconds: return DurationText.format(value / 1e9)
        case .bytes:
            if abs(value) >= Double(1 << 20) { return String(format: "%.1f MiB", value / Double(1 << 20)) }
            if abs(value) >= 1024 { return String(format: "%.0f KiB", value / 1024) }
            return String(format: "%.0f B", value)
        case .count: return MetricDescriptor.Unit.grouped(value)
        case .perSecond: return MetricDescriptor.Unit.rate(value)
        case .ratio: return String(format: "%.3g", value)
        case .allocations: return MetricDescriptor.Unit.allocations(value)
        case .instructions: return MetricDescriptor.Unit.instructions(value)
        }
    }
}

extension Gate {
    /// Calibrates a baseline for cross-run gates from an A/A run: another run of the
    /// same code on another occasion. Each timing row-metric's δ becomes twice the
    /// drift seen (the far end of the ratio's 95 % interval), never below its
    /// threshold, and never lower than an earlier calibration's.
    package static func calibrate(_ baseline: BaselineFile, with rerun: RunRecord) -> (BaselineFile, rows: Int) {
        var file = baseline
        var calibration = file.calibration ?? [:]
        let before = Dictionary(grouping: baseline.run.trials, by: \.key)
        let after = Dictionary(grouping: rerun.trials, by: \.key)
        var calibrated = 0
        for descriptor in baseline.run.metricDescriptors where descriptor.noise == .timing && descriptor.polarity != nil {
            for (key, old) in before {
                guard let new = after[key] else { continue }
                let a = old.filter { $0.outcome.kind == .completed }.compactMap { $0.metrics.value(of: descriptor.name) }.filter { $0 > 0 && $0.isFinite }
                let b = new.filter { $0.outcome.kind == .completed }.compactMap { $0.metrics.value(of: descriptor.name) }.filter { $0 > 0 && $0.isFinite }
                guard !a.isEmpty, !b.isEmpty, let ratio = GateStatistics.hodgesLehmannRatio(baseline: a, candidate: b) else { continue }
                let interval = GateStatistics.ratioInterval(baseline: a, candidate: b, confidence: 0.95)
                let far = max(interval?.upperBound ?? ratio, 1 / (interval?.lowerBound ?? ratio), ratio, 1 / ratio)
                let (threshold, _) = self.threshold(for: descriptor, key: key, in: baseline.run)
                let delta = max(2 * (far - 1), threshold.delta ?? 0.1)
                let name = GateOptions.calibrationKey(key, descriptor.name)
                calibration[name] = max(calibration[name] ?? 0, delta)
                calibrated += 1
            }
        }
        file.calibration = calibration
        file.calibrationRuns = (file.calibrationRuns ?? 0) + 1
        return (file, calibrated)
    }
}
