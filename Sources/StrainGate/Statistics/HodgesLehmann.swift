import Foundation

extension GateStatistics {
    /// Hodges-Lehmann estimate of the ratio candidate/baseline: exp(median of all pairwise log(c_j) - log(b_i)).
    ///
    /// The shift estimate that goes with the Mann-Whitney test: robust to the scheduler hiccups
    /// that drag a mean, and more efficient than the ratio of medians. Returns nil when a
    /// sample is empty or holds a value that is not a positive finite number.
    package static func hodgesLehmannRatio(baseline: [Double], candidate: [Double]) -> Double? {
        guard let differences = sortedPairwiseLogDifferences(baseline: baseline, candidate: candidate) else {
            return nil
        }
        return exp(sortedMedian(differences))
    }

    /// Confidence interval for that ratio by inverting the Mann-Whitney test (the classic
    /// distribution-free interval for the HL shift: order statistics of the pairwise log differences,
    /// using the exact or normal critical value), at the given two-sided confidence (e.g. 0.95).
    ///
    /// With the m·n pairwise log differences sorted as D(1) ≤ … ≤ D(mn), the interval is
    /// [exp D(k), exp D(mn + 1 − k)] for the largest k with P(U ≤ k − 1) ≤ (1 − confidence)/2
    /// under H0; its coverage is at least `confidence` for continuous data. k comes from the
    /// exact distribution up to 60 values per side and from the normal approximation (with
    /// continuity correction) beyond. The comparison allows a relative 1e-9 so that
    /// confidence 0.9 is not lost to 1 − 0.9 being 0.09999999999999998.
    ///
    /// Returns nil when the sample is too small for that confidence: even k = 1, the range of
    /// all differences, falls short when 1/C(m + n, m) > (1 − confidence)/2, as for 3 vs 3 at
    /// 95 % (1/20 > 0.025); 4 vs 4 is the smallest balanced design that reaches 95 %. Also nil
    /// when `confidence` is not strictly between 0 and 1, or a sample is empty or holds a value
    /// that is not a positive finite number.
    package static func ratioInterval(baseline: [Double], candidate: [Double], confidence: Double) -> ClosedRange<Double>? {
        guard confidence > 0, confidence < 1,
              let differences = sortedPairwiseLogDifferences(baseline: baseline, candidate: candidate),
              let k = intervalOrderStatistic(m: baseline.count, n: candidate.count, confidence: confidence)
        else { return nil }
        let lower = differences[k - 1]
        let upper = differences[differences.count - k]
        return exp(lower)...exp(upper)
    }

    /// The 1-based order statistic k of the interval, or nil when no k ≥ 1 reaches the confidence.
    static func intervalOrderStatistic(m: Int, n: Int, confidence: Double) -> Int? {
        let tail = (1 - confidence) / 2
        let allowed = tail * (1 + 1e-9)
        if m <= exactSizeLimit, n <= exactSizeLimit {
            let distribution = MannWhitneyNullDistribution(m, n)
            // P(U ≤ k − 1) grows with k; walk up from k = 1.
            var k = 0
            var cumulative = 0.0
            for u in 0..<distribution.counts.count {
                cumulative += distribution.counts[u] / distribution.total
                guard cumulative <= allowed else { break }
                k = u + 1
            }
            return k >= 1 ? k : nil
        }
        // P(U ≤ k − 1) ≈ Φ((k − 1 + 0.5 − mn/2) / σ) ≤ tail  ⇔  k ≤ mn/2 + 0.5 − z σ.
        let mn = Double(m) * Double(n)
        let sigma = (mn * Double(m + n + 1) / 12).squareRoot()
        let z = StandardNormal.quantile(1 - tail)
        let k = Int((mn / 2 + 0.5 - z * sigma).rounded(.down))
        return k >= 1 ? k : nil
    }
}
