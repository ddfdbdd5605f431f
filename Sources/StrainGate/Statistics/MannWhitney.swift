import Foundation

/// The outcome of one shifted Mann-Whitney test.
package struct MannWhitneyResult: Sendable, Hashable {
    /// U statistic of the (shifted) candidate over the baseline: pairs where candidate wins, ties count one half.
    ///
    /// This is SciPy's `mannwhitneyu(candidate, baseline).statistic`: it runs from 0 (every
    /// candidate below every baseline) to m·n (every candidate above).
    package var u: Double
    /// One-sided p-value for "candidate larger by more than delta".
    package var pValue: Double
    /// Whether the exact distribution was used (no ties, small samples) or the normal approximation.
    package var exact: Bool

    /// A result with the given statistic, p-value and method.
    package init(u: Double, pValue: Double, exact: Bool) {
        self.u = u
        self.pValue = pValue
        self.exact = exact
    }
}

extension GateStatistics {
    /// The largest sample size per side for which the exact null distribution is computed.
    ///
    /// The dynamic programme costs about (m·n)²/4 additions: 3.2 million at 60 × 60, a few
    /// milliseconds; beyond that the normal approximation is accurate to far better than the
    /// p-value scales a gate compares against.
    static let exactSizeLimit = 60

    /// One-sided Mann-Whitney test of "candidate is larger than baseline by more than the factor `1 + delta`".
    ///
    /// Works on log values: candidate logs are shifted down by log(1 + delta) before ranking, so H0 is
    /// "candidate/baseline ≤ 1 + delta". Exact null distribution (dynamic programming over U) when there are
    /// no ties after the shift and m, n ≤ 60; otherwise the normal approximation with tie correction and
    /// continuity correction, as SciPy's `mannwhitneyu(..., method='asymptotic', use_continuity=True)`.
    ///
    /// Shifting by δ puts practical and statistical significance in one test: a slowdown within
    /// δ, or any improvement, cannot produce a small p-value. A tie is exact equality of the
    /// shifted logarithms, anywhere in the pooled sample; with δ = 0, equal raw values tie.
    ///
    /// Returns nil for invalid input: an empty sample, a value that is not a positive finite
    /// number, or a `delta` that is not finite or not above −1.
    package static func shiftedMannWhitney(baseline: [Double], candidate: [Double], delta: Double) -> MannWhitneyResult? {
        guard delta.isFinite, delta > -1,
              let baselineLogs = logarithms(baseline),
              let candidateLogs = logarithms(candidate)
        else { return nil }
        let shift = log1p(delta)
        let shiftedCandidate = candidateLogs.map { $0 - shift }

        let ranking = PooledRanking(baseline: baselineLogs, candidate: shiftedCandidate)
        let m = baselineLogs.count
        let n = shiftedCandidate.count
        let u = ranking.candidateRankSum - Double(n * (n + 1)) / 2

        if !ranking.hasTies, m <= exactSizeLimit, n <= exactSizeLimit {
            // Without ties U is an integer and every arrangement is equally likely under H0.
            let distribution = MannWhitneyNullDistribution(m, n)
            let pValue = distribution.probability(atLeast: Int(u.rounded()))
            return MannWhitneyResult(u: u, pValue: pValue, exact: true)
        }
        let pValue = normalUpperTail(u: u, m: m, n: n, tieSum: ranking.tieSum)
        return MannWhitneyResult(u: u, pValue: pValue, exact: false)
    }

    /// P(U ≥ u) by the normal approximation with tie and continuity corrections.
    static func normalUpperTail(u: Double, m: Int, n: Int, tieSum: Double) -> Double {
        let mn = Double(m) * Double(n)
        let total = Double(m + n)
        let mean = mn / 2
        let variance = mn / 12 * ((total + 1) - tieSum / (total * (total - 1)))
        // Every value tied (or one value in all): U sits at its mean and there is no evidence.
        guard variance > 0 else { return 1 }
        let z = (u - mean - 0.5) / variance.squareRoot()
        return min(max(StandardNormal.upperTail(z), 0), 1)
    }
}

/// Midranks of a pooled two-sample set: the candidate's rank sum and the ties it holds.
struct PooledRanking {
    /// Sum of the (mid)ranks of the candidate values, 1-based.
    var candidateRankSum = 0.0
    /// Σ (t³ − t) over groups of t equal values, the tie-correction term.
    var tieSum = 0.0
    /// Whether any two pooled values are equal.
    var hasTies = false

    init(baseline: [Double], candidate: [Double]) {
        let pooled = baseline.map { (value: $0, isCandidate: false) }
            + candidate.map { (value: $0, isCandidate: true) }
        let sorted = pooled.sorted { $0.value < $1.value }
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count, sorted[end].value == sorted[start].value {
                end += 1
            }
            // Ranks start + 1 ... end share their mean.
            let groupSize = end - start
            let midrank = Double(start + 1 + end) / 2
            for index in start..<end where sorted[index].isCandidate {
                candidateRankSum += midrank
            }
            if groupSize > 1 {
                hasTies = true
                let t = Double(groupSize)
                tieSum += t * t * t - t
            }
            start = end
        }
    }
}

/// The exact null distribution of the Mann-Whitney U for sample sizes m and n without ties.
///
/// Counts arrangements with the classic recursion f(i, j, u) = f(i − 1, j, u − j) + f(i, j − 1, u)
/// (does the largest value belong to the first sample, adding j wins, or to the second?). Counts
/// are Doubles: C(120, 60) ≈ 1e35 fits easily, and a sum of positive terms stays accurate to rounding.
struct MannWhitneyNullDistribution {
    /// Number of arrangements with U = u, for u in 0...m·n.
    let counts: [Double]
    /// C(m + n, m), the number of arrangements.
    let total: Double

    init(_ m: Int, _ n: Int) {
        // The distribution is symmetric in the two sizes; recurse over the smaller one.
        let rows = min(m, n)
        let columns = max(m, n)
        // previous[i] holds f(i, j − 1, ·); current[i] holds f(i, j, ·).
        var previous = [[Double]](repeating: [1], count: rows + 1)
        for j in stride(from: 1, through: columns, by: 1) {
            var current: [[Double]] = [[1]]
            current.reserveCapacity(rows + 1)
            if rows > 0 {
                for i in 1...rows {
                    var f = [Double](repeating: 0, count: i * j + 1)
                    let withoutColumn = previous[i]  // indices 0...i·(j − 1)
                    let withoutRow = current[i - 1]  // indices 0...(i − 1)·j
                    for u in 0...(i * j) {
                        var ways = 0.0
                        if u >= j { ways += withoutRow[u - j] }
                        if u < withoutColumn.count { ways += withoutColumn[u] }
                        f[u] = ways
                    }
                    current.append(f)
                }
            }
            previous = current
        }
        counts = previous[rows]
        // Every arrangement has one U: the counts add up to C(m + n, m).
        total = counts.reduce(0, +)
    }

    /// P(U ≥ u).
    func probability(atLeast u: Int) -> Double {
        guard u > 0 else { return 1 }
        guard u < counts.count else { return 0 }
        // From the far tail inwards, so small p-values are summed small terms first.
        var ways = 0.0
        for index in stride(from: counts.count - 1, through: u, by: -1) {
            ways += counts[index]
        }
        return min(ways / total, 1)
    }

    /// P(U ≤ u).
    func probability(atMost u: Int) -> Double {
        guard u >= 0 else { return 0 }
        guard u < counts.count - 1 else { return 1 }
        var ways = 0.0
        for index in 0...u {
            ways += counts[index]
        }
        return min(ways / total, 1)
    }
}
