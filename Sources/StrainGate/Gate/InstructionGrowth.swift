import Foundation
import StrainRecords

/// Names where a row's instructions grew, from callgrind's per-function costs that
/// each counted trial records (`InstructionCount.functions`), joined by name.
///
/// Every caller of the function that grew grows by as much (their inclusive costs
/// hold it), up to the harness's own frames: so the first name is the innermost
/// function holding most of the growth (the smallest baseline cost among those whose
/// inclusive growth is at least `holdingShare` of the row's; among those placed at
/// file:line, the binary's own code, where there are some), then the functions whose
/// own code grew most. Strain's own frames (`FunctionCost.isHarness`: the executor that runs the
/// work, the probe that counts its allocations) are never named first.
enum InstructionGrowth {
    /// Functions named in a regression's verdict.
    static let named = 3
    /// The share of the largest inclusive growth a function must hold to be named first.
    static let holdingShare = 0.8

    /// `closure #1 in SpinScenario.prepare(context:) (main.swift:21) +20.8 M instr a trial, +2.0 %`,
    /// first the function holding the growth; file:line where the trials placed the function.
    static func functions(baseline: [TrialRecord], candidate: [TrialRecord]) -> [String] {
        let before = perTrial(baseline)
        let after = perTrial(candidate)
        guard !before.isEmpty, !after.isEmpty else { return [] }
        func growth(_ name: String, _ path: KeyPath<Cost, Double>) -> Double { (after[name]?[keyPath: path] ?? 0) - (before[name]?[keyPath: path] ?? 0) }
        let names = Set(before.keys).union(after.keys)
        let largest = names.map { growth($0, \.inclusive) }.max() ?? 0
        guard largest > 0 else { return [] }
        // The growth to hold is the row's own (its counts' change), not the largest inclusive
        // growth: where work moved between threads, a thread's root holds more than grew.
        // Seen beside two busy loops: an await's resumed half ran under the main thread in
        // one build's trials and on GCD's threads in the other's, and `clone`, every GCD
        // thread's root, grew +19.4 M against the row's +9.6 M and was named first.
        let row = totalPerTrial(candidate).flatMap { after in totalPerTrial(baseline).map { after - $0 } } ?? largest
        let held = row > 0 ? min(row, largest) : largest
        var chosen: [String] = []
        let holders = names.filter { growth($0, \.inclusive) >= holdingShare * held }
        // The binary's own code first, a function the trials placed at file:line: across
        // an async resumption callgrind charges the resumed work to the runtime's partial
        // functions (an await-spin's whole growth, 9.6 M, sat under
        // `static Task.sleep(_:) [async resume]`), which tell the reader nothing.
        // Strain's own frames hold the growth too (the executor calls the work; counting
        // one more allocation is the probe's code), and told a team nothing: the allocation
        // plant's growth was named `runInstrumented(_:context:) (StrategyExecutor.swift:58)`.
        func harness(_ name: String) -> Bool { FunctionCost.isHarness(after[name]?.file ?? before[name]?.file) }
        let theirs = holders.filter { !harness($0) }
        let placed = theirs.filter { (after[$0]?.place ?? before[$0]?.place) != nil }
        if let holding = (placed.isEmpty ? theirs : placed)
            .min(by: { (before[$0]?.inclusive ?? 0, $0) < (before[$1]?.inclusive ?? 0, $1) }) {
            chosen.append(holding)
        }
        // Then by own code, Strain's frames after every other.
        let byOwnCode = names.filter { growth($0, \.exclusive) > 0 && !chosen.contains($0) }
            .sorted { (harness($1) ? 1 : 0, growth($0, \.exclusive), $1) > (harness($0) ? 1 : 0, growth($1, \.exclusive), $0) }
        chosen += byOwnCode.prefix(named - chosen.count)
        return chosen.map { name in
            let inclusive = chosen.first == name
            let grown = growth(name, inclusive ? \.inclusive : \.exclusive)
            let base = inclusive ? before[name]?.inclusive ?? 0 : before[name]?.exclusive ?? 0
            let percent = base > 0 ? String(format: ", %+.1f %%", grown / base * 100) : ""
            let place = (after[name]?.place ?? before[name]?.place).map { " (\($0))" } ?? ""
            let change = MetricDescriptor.Unit.instructions(grown, signed: true)
            return "\(name)\(place) \(change) a trial\(inclusive ? "" : " in its own code")\(percent)"
        }
    }

    struct Cost {
        var inclusive: Double
        var exclusive: Double
        /// `main.swift:21`, where a trial placed the function.
        var place: String?
        /// The file it is defined in, as the trial's binary names it.
        var file: String?
    }

    /// The mean instruction count a trial, over the trials that recorded functions; nil without one.
    static func totalPerTrial(_ trials: [TrialRecord]) -> Double? {
        let counts = trials.filter { $0.instructionCount?.functions != nil }.compactMap { $0.instructionCount?.instructions }
        // Each a fraction of the mean: 100,000 counts of 2^53 (a record's range) would pass Int.max as a sum.
        return counts.isEmpty ? nil : counts.reduce(0.0) { $0 + Double($1) / Double(counts.count) }
    }

    /// Each function's mean instructions a trial, over the trials that recorded functions.
    static func perTrial(_ trials: [TrialRecord]) -> [String: Cost] {
        let recorded = trials.compactMap { $0.instructionCount?.functions }
        guard !recorded.isEmpty else { return [:] }
        var sums: [String: Cost] = [:]
        for functions in recorded {
            for function in functions {
                let old = sums[function.name] ?? Cost(inclusive: 0, exclusive: 0)
                sums[function.name] = Cost(inclusive: old.inclusive + Double(function.inclusive), exclusive: old.exclusive + Double(function.exclusive),
                                           place: old.place ?? function.place, file: old.file ?? function.file)
            }
        }
        let count = Double(recorded.count)
        return sums.mapValues { Cost(inclusive: $0.inclusive / count, exclusive: $0.exclusive / count, place: $0.place, file: $0.file) }
    }
}
