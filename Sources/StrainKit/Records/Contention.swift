import Histogram

/// A latency distribution, summed up from an HDR histogram of nanoseconds.
public struct LatencySummary: Codable, Hashable, Sendable {
    /// Operations whose latency was recorded (a sample of all operations).
    public var count: Int
    public var minNanoseconds: Int
    public var p50Nanoseconds: Int
    public var p90Nanoseconds: Int
    public var p99Nanoseconds: Int
    public var p999Nanoseconds: Int
    public var maxNanoseconds: Int
    public var meanNanoseconds: Double
    /// The percentile curve: (percentile, nanoseconds) points, for charts.
    public var curve: [LatencyPoint]

    public init(_ histogram: Histogram<UInt64>) {
        count = Int(histogram.totalCount)
        minNanoseconds = Int(histogram.min)
        p50Nanoseconds = Int(histogram.valueAtPercentile(50))
        p90Nanoseconds = Int(histogram.valueAtPercentile(90))
        p99Nanoseconds = Int(histogram.valueAtPercentile(99))
        p999Nanoseconds = Int(histogram.valueAtPercentile(99.9))
        maxNanoseconds = Int(histogram.max)
        meanNanoseconds = histogram.totalCount == 0 ? 0 : histogram.mean
        curve = [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100].map { percentile in
            LatencyPoint(percentile: percentile, nanoseconds: Int(histogram.valueAtPercentile(percentile)))
        }
    }
}

public struct LatencyPoint: Codable, Hashable, Sendable {
    public var percentile: Double
    public var nanoseconds: Int
}

/// How evenly the workers shared the operations.
public struct Fairness: Codable, Hashable, Sendable {
    /// Operations each worker did, in worker order.
    public var operationsPerWorker: [Int]
    /// (max − min) / mean: 0 when every worker did the same.
    public var spread: Double
    /// Jain's index, (Σx)² / (n·Σx²): 1 when even, 1/n when one worker did everything.
    public var jainIndex: Double

    public init(operationsPerWorker: [Int]) {
        self.operationsPerWorker = operationsPerWorker
        let values = operationsPerWorker.map(Double.init)
        let total = values.reduce(0, +)
        let squares = values.reduce(0) { $0 + $1 * $1 }
        let mean = values.isEmpty ? 0 : total / Double(values.count)
        spread = mean > 0 ? ((values.max() ?? 0) - (values.min() ?? 0)) / mean : 0
        jainIndex = squares > 0 ? total * total / (Double(values.count) * squares) : 1
    }
}
