import StrainKit

/// Written against 0.1.0 (the minimal user package as it was then): metrics declared
/// as a list of `MetricDescriptor`s, recorded by name.
/// Sums a buffer on the strategy, `rounds` times, timing each round.
struct ChecksumScenario: Scenario {
    static let name = "checksum"
    static let summary = "sums a buffer of `bytes` bytes `rounds` times on the strategy"

    enum Order: String, CaseIterable, Sendable { case forward, backward }

    static let bytes = Parameter<Int>.byteSize("bytes", in: 1...(1 << 24), default: 4096, help: "the buffer's size")
    static let rounds = Parameter<Int>("rounds", in: 1...10_000, default: 10, help: "times the buffer is summed")
    static let order = Parameter<Order>("order", default: .forward, help: "which way the sum walks the buffer")
    static let parameters: [any ParameterDeclaration] = [bytes, rounds, order]
    static let metrics = [
        MetricDescriptor(name: "checksum", unit: .count, polarity: nil, noise: .deterministic, summary: "the sum, modulo 2^32"),
        MetricDescriptor(name: "bytes per second", unit: .perSecond, polarity: .higherIsBetter, noise: .timing, summary: "bytes summed per second"),
    ]

    let bytes: Int
    let rounds: Int
    let order: Order

    init(parameters: ParameterValues) {
        bytes = parameters[Self.bytes]
        rounds = parameters[Self.rounds]
        order = parameters[Self.order]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let buffer = (0..<bytes).map { UInt8(truncatingIfNeeded: $0) }
        let expected = buffer.reduce(UInt32(0)) { $0 &+ UInt32($1) }
        let (rounds, order) = (rounds, order)
        return { executor in
            context.heartbeat.queued(rounds)
            try executor.perform {
                var latencies = LatencyRecorder()
                let start = MonotonicClock.nanoseconds
                var sum: UInt32 = 0
                for _ in 0..<rounds {
                    sum = context.unit {
                        latencies.time {
                            order == .forward ? buffer.reduce(UInt32(0)) { $0 &+ UInt32($1) }
                                              : buffer.reversed().reduce(UInt32(0)) { $0 &+ UInt32($1) }
                        }
                    }
                }
                context.addWorker(0, operations: rounds, latencies: latencies)
                context.recordThroughput(operations: rounds, seconds: MonotonicClock.seconds(since: start))
                context.record("checksum", Double(sum))
                context.record("bytes per second", Double(rounds * buffer.count) / max(MonotonicClock.seconds(since: start), 1e-9))
                try context.check(sum == expected, "summed \(sum), expected \(expected)")
            }
        }
    }
}

