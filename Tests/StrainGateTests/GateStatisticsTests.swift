import Foundation
import Testing
@testable import StrainGate

// Reference values come from SciPy 1.17.1 (python3), computed once and pasted here with the
// snippet that produced them. SciPy's `mannwhitneyu(x, y)` reports U for x, so x is the shifted
// candidate, log(c) − log1p(δ), and y is log(b): the same U as `MannWhitneyResult.u`.

/// Whether two numbers agree to an absolute tolerance.
private func close(_ a: Double, _ b: Double, within tolerance: Double) -> Bool {
    abs(a - b) <= tolerance
}

// MARK: - Median

@Test func medianOfAnOddCountIsTheMiddleValue() {
    #expect(GateStatistics.median([5, 1, 3]) == 3)
}

@Test func medianOfAnEvenCountIsTheMeanOfTheTwoMiddleValues() {
    #expect(GateStatistics.median([4, 1, 3, 2]) == 2.5)
}

@Test func medianOfNothingOrOfANaNIsNil() {
    #expect(GateStatistics.median([]) == nil)
    #expect(GateStatistics.median([1, .nan, 2]) == nil)
}

// MARK: - Shifted Mann-Whitney

@Test func exactPValueWithoutTiesMatchesSciPyExact() throws {
    // Reference values from SciPy 1.17 (numpy as np, scipy.stats.mannwhitneyu), computed once by hand:
    // b = [1.02, 1.10, 0.97, 1.31, 1.05, 1.22, 0.99]; c = [1.25, 1.18, 1.40, 1.09, 1.33, 1.28]
    // for d in [0.0, 0.1]:
    //     r = mannwhitneyu(np.log(c) - np.log1p(d), np.log(b), alternative='greater', method='exact')
    // d=0:   U=35.0  p=0.02564102564102564
    // d=0.1: U=27.0  p=0.2226107226107226
    // b30 = [1 + ((i * 37) % 101) / 100 for i in range(30)]
    // c30 = [1.3031 + ((i * 53) % 97) / 100 for i in range(30)]
    // mannwhitneyu(np.log(c30) - np.log1p(0.05), np.log(b30), alternative='greater', method='exact')
    // -> U=601.0  p=0.012658480035301166  (smallest gap between pooled shifted logs: 7.6e-5)
    let baseline = [1.02, 1.10, 0.97, 1.31, 1.05, 1.22, 0.99]
    let candidate = [1.25, 1.18, 1.40, 1.09, 1.33, 1.28]
    let cases: [(baseline: [Double], candidate: [Double], delta: Double, u: Double, p: Double)] = [
        (baseline, candidate, 0.0, 35, 0.02564102564102564),
        (baseline, candidate, 0.1, 27, 0.2226107226107226),
        (
            (0..<30).map { 1 + Double(($0 * 37) % 101) / 100 },
            (0..<30).map { 1.3031 + Double(($0 * 53) % 97) / 100 },
            0.05, 601, 0.012658480035301166
        ),
    ]
    for reference in cases {
        let result = try #require(GateStatistics.shiftedMannWhitney(
            baseline: reference.baseline, candidate: reference.candidate, delta: reference.delta))
        #expect(result.exact)
        #expect(result.u == reference.u)
        #expect(close(result.pValue, reference.p, within: 1e-12), "p = \(result.pValue), SciPy \(reference.p)")
    }
}

@Test func candidateExactlyOnePointThreeTimesTheBaselinePassesAHalfShiftAndFailsATenPercentShift() throws {
    // A tight baseline (spread under 4 %) so that 1.3/1.1 ≈ 1.18 separates the samples completely.
    let baseline = [100, 101.5, 99.2, 102.3, 98.7, 100.9, 101.1, 99.8, 100.4, 102.0]
    let candidate = baseline.map { $0 * 1.3 }

    let halfShift = try #require(GateStatistics.shiftedMannWhitney(baseline: baseline, candidate: candidate, delta: 0.5))
    #expect(halfShift.pValue >= 0.5)
    #expect(halfShift.u == 0)

    let tenPercent = try #require(GateStatistics.shiftedMannWhitney(baseline: baseline, candidate: candidate, delta: 0.1))
    #expect(tenPercent.exact)
    #expect(tenPercent.u == 100)
    // Every shifted candidate above every baseline: the floor 1/C(20, 10) = 1/184756.
    #expect(close(tenPercent.pValue, 1.0 / 184_756, within: 1e-18))
    #expect(tenPercent.pValue < 1e-5)
}

@Test func identicalSamplesAreNeverRejectedWithATenPercentShift() throws {
    let samples: [[Double]] = [
        [1, 2, 3],
        [0.5, 0.51, 0.52, 0.53, 0.54, 0.55, 0.56, 0.57],
        [100, 101.5, 99.2, 102.3, 98.7, 100.9, 101.1, 99.8, 100.4, 102.0],
        [3, 3, 3, 4, 4, 5],  // ties within the sample: normal approximation
        (1...80).map { 1 + Double($0 % 17) / 10 },  // beyond the exact limit
    ]
    for sample in samples {
        let result = try #require(GateStatistics.shiftedMannWhitney(baseline: sample, candidate: sample, delta: 0.1))
        #expect(result.pValue > 0.05, "A/A on \(sample) gave p = \(result.pValue)")
    }
}

@Test func normalApproximationWithTiesMatchesSciPyAsymptotic() throws {
    // b = [3, 4, 4, 5, 6, 6, 6, 8]; c = [4, 5, 6, 7, 7, 8, 9, 9, 10]
    // mannwhitneyu(np.log(c), np.log(b), alternative='greater', method='asymptotic', use_continuity=True)
    // -> U=56.5  p=0.025822279474465578
    let result = try #require(GateStatistics.shiftedMannWhitney(
        baseline: [3, 4, 4, 5, 6, 6, 6, 8], candidate: [4, 5, 6, 7, 7, 8, 9, 9, 10], delta: 0))
    #expect(!result.exact)
    #expect(result.u == 56.5)
    #expect(close(result.pValue, 0.025822279474465578, within: 1e-9), "p = \(result.pValue)")
}

@Test func samplesBeyondSixtyUseTheNormalApproximationLikeSciPyAsymptotic() throws {
    // bl = [1 + i / 100 for i in range(70)]; cl = [1.155 + i / 100 for i in range(70)]
    // mannwhitneyu(np.log(cl), np.log(bl), alternative='greater', method='asymptotic', use_continuity=True)
    // -> U=3415.0  p=2.914574477110621e-05
    let baseline = (0..<70).map { 1 + Double($0) / 100 }
    let candidate = (0..<70).map { 1.155 + Double($0) / 100 }
    let result = try #require(GateStatistics.shiftedMannWhitney(baseline: baseline, candidate: candidate, delta: 0))
    #expect(!result.exact)
    #expect(result.u == 3415)
    #expect(close(result.pValue, 2.914574477110621e-05, within: 1e-9), "p = \(result.pValue)")
}

@Test func everyValueTiedGivesNoEvidence() throws {
    let result = try #require(GateStatistics.shiftedMannWhitney(baseline: [2, 2, 2], candidate: [2, 2], delta: 0))
    #expect(!result.exact)
    #expect(result.u == 3)
    #expect(result.pValue == 1)
}

@Test func invalidInputGivesNoTestResult() {
    let valid = [1.0, 2.0, 3.0]
    #expect(GateStatistics.shiftedMannWhitney(baseline: [], candidate: valid, delta: 0.1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: valid, candidate: [], delta: 0.1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: [1, 0, 2], candidate: valid, delta: 0.1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: valid, candidate: [1, -2], delta: 0.1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: [1, .nan], candidate: valid, delta: 0.1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: valid, candidate: [.infinity], delta: 0.1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: valid, candidate: valid, delta: -1) == nil)
    #expect(GateStatistics.shiftedMannWhitney(baseline: valid, candidate: valid, delta: .nan) == nil)
    #expect(GateStatistics.hodgesLehmannRatio(baseline: valid, candidate: [0]) == nil)
    #expect(GateStatistics.ratioInterval(baseline: valid, candidate: valid, confidence: 1) == nil)
}

// MARK: - Benjamini-Hochberg

@Test func benjaminiHochbergMatchesAHandWorkedExample() {
    // Sorted: 0.005·4/1 = 0.02, 0.01·4/2 = 0.02, 0.03·4/3 = 0.04, 0.04·4/4 = 0.04; step-up minima unchanged.
    let q = GateStatistics.benjaminiHochberg([0.01, 0.04, 0.03, 0.005])
    let expected = [0.02, 0.04, 0.04, 0.02]
    #expect(q.count == expected.count)
    for (got, want) in zip(q, expected) {
        #expect(close(got, want, within: 1e-15), "q = \(q)")
    }
}

@Test func benjaminiHochbergStepsUpSoALargerPValueCanLowerASmallerOnesQValue() {
    // Raw p·m/rank: 0.03·3/1 = 0.09, 0.04·3/2 = 0.06, 0.05·3/3 = 0.05; step-up takes the minimum from the top.
    let q = GateStatistics.benjaminiHochberg([0.05, 0.03, 0.04])
    #expect(close(q[0], 0.05, within: 1e-15))
    #expect(close(q[1], 0.05, within: 1e-15))
    #expect(close(q[2], 0.05, within: 1e-15))
}

@Test func benjaminiHochbergQValuesAreMonotoneInThePValuesAndNeverBelowThem() {
    var generator = SplitMix64(seed: 7)
    let pValues = (0..<300).map { _ in pow(generator.nextUnit(), 3) }  // crowded towards 0
    let qValues = GateStatistics.benjaminiHochberg(pValues)
    let byP = pValues.indices.sorted { pValues[$0] < pValues[$1] }
    for (earlier, later) in zip(byP, byP.dropFirst()) {
        #expect(qValues[earlier] <= qValues[later])
    }
    for (p, q) in zip(pValues, qValues) {
        #expect(q >= p && q <= 1)
    }
    #expect(GateStatistics.benjaminiHochberg([]) == [])
    #expect(GateStatistics.benjaminiHochberg([.nan, 0.001]) == [1, 0.002])
}

// MARK: - P-value floor and minimum n

@Test func smallestPValueOfFiveRepetitionsIsOneOverTwoHundredFiftyTwo() {
    #expect(GateStatistics.smallestPValue(repetitions: 5) == 1.0 / 252)
    #expect(GateStatistics.smallestPValue(repetitions: 3) == 1.0 / 20)
    #expect(GateStatistics.smallestPValue(repetitions: 8) == 1.0 / 12_870)
    #expect(GateStatistics.smallestPValue(repetitions: 0) == 1)
}

@Test func smallestPValueStaysAccurateWhereTheBinomialOverflowsInt() {
    // C(200, 100) ≈ 9.05e58 is far beyond Int.max; compare with lgamma.
    let viaLogGamma = exp(2 * lgamma(101.0) - lgamma(201.0))
    let floor = GateStatistics.smallestPValue(repetitions: 100)
    #expect(floor > 0)
    #expect(abs(floor / viaLogGamma - 1) < 1e-10)
}

@Test func threeHundredRowMetricsAtFivePercentNeedEightRepetitions() {
    // C(16, 8) = 12870 → 7.8e-5 ≤ 0.05/300 = 1.67e-4, but C(14, 7) = 3432 → 2.9e-4 > 1.67e-4.
    #expect(GateStatistics.minimumRepetitions(rows: 300, q: 0.05) == 8)
}

@Test func minimumRepetitionsFollowsTheTableInTheGateResearch() {
    // research/gate.md §3.4: the largest m for which one hit can pass is 1, 3, 12, 46, 171, 643
    // at n = 3...8; one row more needs one repetition more.
    let largestRows = [3: 1, 4: 3, 5: 12, 6: 46, 7: 171, 8: 643]
    for (n, rows) in largestRows {
        #expect(GateStatistics.minimumRepetitions(rows: rows, q: 0.05) == n, "rows \(rows)")
        #expect(GateStatistics.minimumRepetitions(rows: rows + 1, q: 0.05) == n + 1, "rows \(rows + 1)")
    }
    #expect(GateStatistics.minimumRepetitions(rows: 0, q: 0.05) == 3)
}

// MARK: - Hodges-Lehmann

@Test func hodgesLehmannRatioOfAUniformlyScaledCandidateIsTheScale() throws {
    let ratio = try #require(GateStatistics.hodgesLehmannRatio(baseline: [1, 2, 3], candidate: [1.5, 3, 4.5]))
    #expect(close(ratio, 1.5, within: 1e-12))
}

@Test func ratioIntervalMatchesTheExactOrderStatisticsAndContainsTheEstimate() throws {
    // Reference values by brute force in Python (numpy as np, itertools, collections.Counter, math.comb), once:
    // dist = Counter(sum(p - i for i, p in enumerate(c)) for c in itertools.combinations(range(20), 10))
    // k = largest with sum(dist[u] for u < k) / comb(20, 10) <= 0.025  -> k = 24 (P(U <= 23) = 0.0216)
    // D = np.sort([np.log(cj) - np.log(bi) for cj in c for bi in b])
    // np.exp(D[k - 1]), np.exp(D[100 - k]), np.exp(np.median(D))
    // -> 1.184340931615461, 1.2216748768472911, HL 1.2036641636100522
    let baseline = [100, 101.5, 99.2, 102.3, 98.7, 100.9, 101.1, 99.8, 100.4, 102.0]
    let candidate = [121.3, 118.9, 124.0, 119.5, 122.8, 120.1, 117.6, 123.3, 121.9, 120.6]
    let interval = try #require(GateStatistics.ratioInterval(baseline: baseline, candidate: candidate, confidence: 0.95))
    let estimate = try #require(GateStatistics.hodgesLehmannRatio(baseline: baseline, candidate: candidate))
    #expect(close(interval.lowerBound, 1.184340931615461, within: 1e-12), "\(interval)")
    #expect(close(interval.upperBound, 1.2216748768472911, within: 1e-12), "\(interval)")
    #expect(close(estimate, 1.2036641636100522, within: 1e-12))
    #expect(interval.contains(estimate))
}

@Test func ratioIntervalIsNilWhenTheSampleIsTooSmallForTheConfidence() throws {
    // 3 vs 3: the most extreme arrangement has probability 1/20 = 0.05 > 0.025.
    #expect(GateStatistics.ratioInterval(baseline: [1, 2, 3], candidate: [1.5, 3, 4.5], confidence: 0.95) == nil)
    // ...but it reaches 90 % (0.05 ≤ 0.05), and 4 vs 4 (1/70) reaches 95 %.
    let ninety = try #require(GateStatistics.ratioInterval(baseline: [1, 2, 3], candidate: [1.5, 3, 4.5], confidence: 0.9))
    #expect(close(ninety.lowerBound, 0.5, within: 1e-12) && close(ninety.upperBound, 4.5, within: 1e-12))
    let four = try #require(GateStatistics.ratioInterval(
        baseline: [1, 2, 3, 4], candidate: [1.5, 3, 4.5, 6], confidence: 0.95))
    let estimate = try #require(GateStatistics.hodgesLehmannRatio(baseline: [1, 2, 3, 4], candidate: [1.5, 3, 4.5, 6]))
    #expect(four.contains(estimate))
}

@Test func largeSampleRatioIntervalUsesTheNormalCriticalValueAndContainsTheEstimate() throws {
    let baseline = (0..<70).map { 1 + Double($0) / 100 }
    let candidate = (0..<70).map { 1.155 + Double($0) / 100 }
    let interval = try #require(GateStatistics.ratioInterval(baseline: baseline, candidate: candidate, confidence: 0.95))
    let estimate = try #require(GateStatistics.hodgesLehmannRatio(baseline: baseline, candidate: candidate))
    #expect(interval.contains(estimate))
    #expect(interval.lowerBound < estimate && estimate < interval.upperBound)
    // k = ⌊4900/2 + 0.5 − 1.959964·√(4900·141/12)⌋ = ⌊2450.5 − 470.30⌋ = 1980.
    #expect(GateStatistics.intervalOrderStatistic(m: 70, n: 70, confidence: 0.95) == 1980)
}

@Test func normalCriticalValueAgreesWithTheExactOneAtTheSwitchOver() throws {
    // At 60 × 60 the exact k and the normal k differ by at most one order statistic.
    let exact = try #require(GateStatistics.intervalOrderStatistic(m: 60, n: 60, confidence: 0.95))
    let mn = 3600.0
    let normal = Int((mn / 2 + 0.5 - StandardNormal.quantile(0.975) * (mn * 121 / 12).squareRoot()).rounded(.down))
    #expect(abs(exact - normal) <= 1, "exact \(exact), normal \(normal)")
}

@Test func normalQuantileMatchesSciPy() {
    // SciPy, once: [scipy.stats.norm.ppf(p) for p in (0.975, 0.9, 0.01, 1e-6)]
    let references: [(p: Double, z: Double)] = [
        (0.975, 1.959963984540054), (0.9, 1.2815515655446004),
        (0.01, -2.3263478740408408), (1e-6, -4.753424308822899), (0.5, 0),
    ]
    for reference in references {
        #expect(close(StandardNormal.quantile(reference.p), reference.z, within: 1e-12), "p = \(reference.p)")
    }
}

// MARK: - Calibration and power by simulation

/// SplitMix64: a tiny, seedable generator so simulations give the same draws on every run.
struct SplitMix64: RandomNumberGenerator {
    /// The running state, advanced by the golden-ratio increment.
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw in the open interval (0, 1).
    mutating func nextUnit() -> Double {
        (Double(next() >> 11) + 0.5) * 0x1p-53
    }

    /// A standard normal draw by Box-Muller.
    mutating func nextNormal() -> Double {
        (-2 * log(nextUnit())).squareRoot() * cos(2 * Double.pi * nextUnit())
    }

    /// n log-normal draws with median `scale` and log-standard-deviation `sigma`.
    mutating func logNormalSample(count n: Int, scale: Double, sigma: Double) -> [Double] {
        (0..<n).map { _ in scale * exp(sigma * nextNormal()) }
    }
}

/// The share of `draws` simulated comparisons that the shifted test rejects at `alpha`.
private func rejectionRate(seed: UInt64, draws: Int, n: Int, sigma: Double, plantedRatio: Double, delta: Double, alpha: Double) throws -> Double {
    var generator = SplitMix64(seed: seed)
    var rejections = 0
    for _ in 0..<draws {
        let baseline = generator.logNormalSample(count: n, scale: 1, sigma: sigma)
        let candidate = generator.logNormalSample(count: n, scale: plantedRatio, sigma: sigma)
        let result = try #require(GateStatistics.shiftedMannWhitney(baseline: baseline, candidate: candidate, delta: delta))
        if result.pValue <= alpha { rejections += 1 }
    }
    return Double(rejections) / Double(draws)
}

@Test func aaComparisonsAreRejectedNoMoreOftenThanAlphaAllows() throws {
    // 200 A/A draws, n = 10 per side, σ(log) = 0.25, no shift: about 5 % expected (binomial sd 1.5 %).
    let rate = try rejectionRate(seed: 20_240_601, draws: 200, n: 10, sigma: 0.25, plantedRatio: 1, delta: 0, alpha: 0.05)
    #expect(rate <= 0.08, "A/A rejection rate \(rate)")
}

@Test func aPlantedOnePointFiveSlowdownIsFoundAtLeastNineTimesInTen() throws {
    // 200 draws, n = 10 per side, σ(log) = 0.15, candidate 1.5× slower, tested against δ = 10 %.
    let power = try rejectionRate(seed: 20_240_602, draws: 200, n: 10, sigma: 0.15, plantedRatio: 1.5, delta: 0.1, alpha: 0.05)
    #expect(power >= 0.9, "power \(power)")
}
