import Histogram

extension LatencySummary {
    /// Sums up an HDR histogram of nanoseconds.
    package init(_ histogram: Histogram<UInt64>) {
        self.init(
            count: Int(histogram.totalCount),
            minNanoseconds: Int(histogram.min),
            p50Nanoseconds: Int(histogram.valueAtPercentile(50)),
            p90Nanoseconds: Int(histogram.valueAtPercentile(90)),
            p99Nanoseconds: Int(histogram.valueAtPercentile(99)),
            p999Nanoseconds: Int(histogram.valueAtPercentile(99.9)),
            maxNanoseconds: Int(histogram.max),
            meanNanoseconds: histogram.totalCount == 0 ? 0 : histogram.mean,
            curve: [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100].map { percentile in
                LatencyPoint(percentile: percentile, nanoseconds: Int(histogram.valueAtPercentile(percentile)))
            }
        )
    }
}
