/// A latency distribution, summed up from an HDR histogram of nanoseconds.
public struct LatencySummary: Codable, Hashable, Sendable {
    /// Operations whose latency was recorded (a sample of all operations).
    public var count: Int
    /// The fastest recorded operation.
    public var minNanoseconds: Int
    /// The median.
    public var p50Nanoseconds: Int
    /// The 90th percentile.
    public var p90Nanoseconds: Int
    /// The 99th percentile.
    public var p99Nanoseconds: Int
    /// The 99.9th percentile.
    public var p999Nanoseconds: Int
    /// The slowest recorded operation.
    public var maxNanoseconds: Int
    /// The mean.
    public var meanNanoseconds: Double
    /// The percentile curve: (percentile, nanoseconds) points, for charts.
    public var curve: [LatencyPoint]

    /// A summary of these values (nanoseconds).
    public init(count: Int, minNanoseconds: Int, p50Nanoseconds: Int, p90Nanoseconds: Int, p99Nanoseconds: Int,
                p999Nanoseconds: Int, maxNanoseconds: Int, meanNanoseconds: Double, curve: [LatencyPoint]) {
        self.count = count
        self.minNanoseconds = minNanoseconds
        self.p50Nanoseconds = p50Nanoseconds
        self.p90Nanoseconds = p90Nanoseconds
        self.p99Nanoseconds = p99Nanoseconds
        self.p999Nanoseconds = p999Nanoseconds
        self.maxNanoseconds = maxNanoseconds
        self.meanNanoseconds = meanNanoseconds
        self.curve = curve
    }
}

/// One point of a latency curve.
public struct LatencyPoint: Codable, Hashable, Sendable {
    /// The percentile, 0 to 100.
    public var percentile: Double
    /// The latency there.
    public var nanoseconds: Int

    /// A point of the curve.
    public init(percentile: Double, nanoseconds: Int) {
        self.percentile = percentile
        self.nanoseconds = nanoseconds
    }
}

/// How evenly the workers shared the operations.
public struct Fairness: Codable, Hashable, Sendable {
    /// Operations each worker did, in worker order.
    public var operationsPerWorker: [Int]
    /// (max − min) / mean: 0 when every worker did the same.
    public var spread: Double
    /// Jain's index, (Σx)² / (n·Σx²): 1 when even, 1/n when one worker did everything.
    public var jainIndex: Double

    /// The fairness of these per-worker operation counts.
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
