import Foundation

/// The decision statistics of the gate, on log-scaled values oriented so that larger is worse.
///
/// Callers orient every metric so that a bigger value is a regression (1/throughput, not
/// throughput) and pass the raw positive values; the functions take logarithms themselves,
/// so a shift by a factor is a shift by a constant. The recipe (shifted one-sided
/// Mann-Whitney per row-metric, Benjamini-Hochberg across all of them, Hodges-Lehmann for
/// display, a minimum n from the p-value floor) is argued in `research/gate.md` §3.4.
///
/// The namespace has no state: every function is pure and safe to call from any thread.
package enum GateStatistics {
    /// Median of the values (mean of the two middle ones for an even count); nil when empty.
    ///
    /// Also nil when a value is NaN, which has no place in an order.
    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty, !values.contains(where: \.isNaN) else { return nil }
        return sortedMedian(values.sorted())
    }

    /// The smallest one-sided exact p-value a Mann-Whitney test with n values per side can reach: 1 / C(2n, n).
    ///
    /// This is the floor that decides whether a row can fail at all: the most extreme
    /// arrangement (every candidate value above every baseline value) is one of C(2n, n)
    /// equally likely ones under H0. The binomial is built as a running product of Doubles,
    /// exact while it fits in 53 bits (n ≤ 28) and accurate to rounding beyond, so it does not
    /// overflow `Int` at n = 100. It returns 1 for n ≤ 0 (no data, no evidence) and 0 once
    /// C(2n, n) exceeds `Double`'s range (n > 514).
    package static func smallestPValue(repetitions n: Int) -> Double {
        guard n > 0 else { return 1 }
        var arrangements = 1.0
        for i in 1...n {
            // C(n + i, i) = C(n + i - 1, i - 1) · (n + i) / i: an integer at every step.
            arrangements = arrangements * Double(n + i) / Double(i)
            if !arrangements.isFinite { return 0 }
        }
        return 1 / arrangements
    }

    /// The fewest repetitions per side with which a row can fail at FDR level `q` when `rows` row-metrics
    /// are gated: the smallest n with smallestPValue(n) ≤ q / rows (the BH threshold of the strictest rank).
    ///
    /// A single regression among `rows` tests passes Benjamini-Hochberg only if its p-value is
    /// at most q / rows; below this n the gate must call a row inconclusive rather than pass it
    /// (`research/gate.md` §3.4, item 6). `rows` below 1 counts as 1.
    ///
    /// - Precondition: `q` is finite and greater than 0; validate the FDR level where it is read.
    package static func minimumRepetitions(rows: Int, q: Double) -> Int {
        precondition(q.isFinite && q > 0, "the FDR level q must be a finite number above 0, got \(q)")
        let threshold = q / Double(max(rows, 1))
        var n = 1
        // The floor shrinks by about 4 per repetition, so this ends within a few hundred steps
        // even for thresholds near the smallest Double.
        while smallestPValue(repetitions: n) > threshold {
            n += 1
        }
        return n
    }

    /// The median of an already sorted, non-empty array.
    static func sortedMedian(_ sorted: [Double]) -> Double {
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return sorted[middle] }
        return (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Natural logarithms of the values, or nil when the sample is empty or a value is not a positive finite number.
    ///
    /// Metrics reach the gate as positive quantities (seconds, bytes, 1/throughput); a zero, a
    /// negative, an infinity or a NaN means the caller fed something that is not a metric, and
    /// the tests answer nil instead of trapping.
    static func logarithms(_ values: [Double]) -> [Double]? {
        guard !values.isEmpty else { return nil }
        var logs: [Double] = []
        logs.reserveCapacity(values.count)
        for value in values {
            guard value.isFinite, value > 0 else { return nil }
            logs.append(Foundation.log(value))
        }
        return logs
    }

    /// The sorted pairwise differences log(c_j) − log(b_i), the Walsh-like set behind Hodges-Lehmann.
    ///
    /// Takes m·n memory, fine for the tens of repetitions a gate runs.
    static func sortedPairwiseLogDifferences(baseline: [Double], candidate: [Double]) -> [Double]? {
        guard let baselineLogs = logarithms(baseline), let candidateLogs = logarithms(candidate) else {
            return nil
        }
        var differences: [Double] = []
        differences.reserveCapacity(baselineLogs.count * candidateLogs.count)
        for c in candidateLogs {
            for b in baselineLogs {
                differences.append(c - b)
            }
        }
        differences.sort()
        return differences
    }
}
