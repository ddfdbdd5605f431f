import Foundation
import StrainRecords

/// Names where a row's allocations grew: the call sites whose count a trial
/// grew most, baseline against candidate, joined by function, file name and line
/// (`AllocationSite.identity`: their addresses and folders differ between builds).
enum AllocationGrowth {
    /// Sites named in a regression's verdict.
    static let named = 3

    /// `OrderModel.swift:42 (Order.init(from:)) +1,000 allocs a trial`, largest growth first.
    static func sites(baseline: [TrialRecord], candidate: [TrialRecord]) -> [String] {
        let before = perTrial(baseline)
        let after = perTrial(candidate)
        let grown = after.compactMap { identity, site -> (String, Double)? in
            let growth = site.allocations - (before[identity]?.allocations ?? 0)
            // Half an allocation a trial is what averaging a site seen in some repetitions gives.
            return growth >= 0.5 ? (site.place, growth) : nil
        }
        return grown.sorted { $0.1 > $1.1 }.prefix(named).map { place, growth in
            "\(place) +\(Self.grouped(growth)) allocs a trial"
        }
    }

    /// Each site's mean allocations a trial, over the trials that recorded sites.
    ///
    /// A trial's sites of one place are added as whole numbers with checked arithmetic
    /// (a record's sites hold at most 2^53 allocations in all, `RecordRanges`), each
    /// trial's sum then adds to the mean as a fraction of it: 100,000 trials of 2^53
    /// each would pass `Int.max` as a sum.
    static func perTrial(_ trials: [TrialRecord]) -> [String: (place: String, allocations: Double)] {
        let recorded = trials.compactMap(\.allocationSites)
        guard !recorded.isEmpty else { return [:] }
        var means: [String: (place: String, allocations: Double)] = [:]
        for sites in recorded {
            var sums: [String: (place: String, allocations: Int)] = [:]
            for site in sites {
                let old = sums[site.identity]?.allocations ?? 0
                let (sum, overflow) = old.addingReportingOverflow(site.allocations)
                sums[site.identity] = (site.place, overflow ? Int.max : sum)
            }
            for (identity, sum) in sums {
                let old = means[identity]?.allocations ?? 0
                means[identity] = (sum.place, old + Double(sum.allocations) / Double(recorded.count))
            }
        }
        return means
    }

    /// `1,000`: a count with thousands separated, rounded to a whole number; a
    /// value no `Int` holds (not from a checked record) in exponent form, never a trap.
    static func grouped(_ value: Double) -> String {
        guard let whole = Int(exactly: value.rounded()) else { return String(format: "%.3g", value) }
        let digits = String(whole.magnitude)
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (whole < 0 ? "-" : "") + String(out.reversed())
    }
}

extension MetricDescriptor.Noise {
    /// Where a gate lists a metric of this kind: counted first, timings last.
    var listOrder: Int {
        switch self {
        case .counted: 0
        case .deterministic: 1
        case .timing: 2
        }
    }
}
