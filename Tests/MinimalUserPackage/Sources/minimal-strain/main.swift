import Foundation
import StrainCLI
import StrainKit

/// Sums a buffer on the strategy, `rounds` times, timing each round.
struct ChecksumScenario: Scenario {
    static let name = "checksum"
    static let summary = "sums a buffer of `bytes` bytes `rounds` times on the strategy"

    enum Order: String, CaseIterable, Sendable { case forward, backward }

    static let bytes = Parameter<Int>.byteSize("bytes", in: 1...(1 << 24), default: 4096, help: "the buffer's size")
    static let rounds = Parameter<Int>("rounds", in: 1...10_000, default: 10, help: "times the buffer is summed")
    static let order = Parameter<Order>("order", default: .forward, help: "which way the sum walks the buffer")
    static let parameters: [any ParameterDeclaration] = [bytes, rounds, order]
    static let checksum = Metric<Int>.count("checksum", better: nil, noise: .deterministic, summary: "the sum, modulo 2^32")
    static let bytesPerSecond = Metric<Double>.rate("bytes per second", better: .higherIsBetter, noise: .timing, summary: "bytes summed per second")
    static let metrics: [any MetricDeclaration] = [checksum, bytesPerSecond]

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
                context.record(Self.checksum, Int(sum))
                context.record(Self.bytesPerSecond, Double(rounds * buffer.count) / max(MonotonicClock.seconds(since: start), 1e-9))
                try context.check(sum == expected, "summed \(sum), expected \(expected)")
            }
        }
    }
}

/// Reads a parameter it does not declare, on purpose: the runner must refuse a
/// suite that runs it (exit 2, naming the scenario and the parameter) before
/// any trial starts.
struct MisreadScenario: Scenario {
    static let name = "misread"
    static let summary = "reads a parameter it forgot to declare (a mistake the runner must catch)"
    static let size = Parameter<Int>("size", in: 1...100, default: 10, help: "declared")
    static let sise = Parameter<Int>("sise", in: 1...100, default: 10, help: "the misspelling, never declared")
    static let parameters: [any ParameterDeclaration] = [size]

    init(parameters: ParameterValues) {
        _ = parameters[Self.size] + parameters[Self.sise]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        { executor in try executor.perform {} }
    }
}

// MINIMAL_DUPLICATE=1 builds a catalog with two scenarios of one name, which `strain` must refuse.
let scenarios: [any Scenario.Type] = [ChecksumScenario.self, MisreadScenario.self]
let duplicate: [any Scenario.Type] = ProcessInfo.processInfo.environment["MINIMAL_DUPLICATE"] == "1" ? [ChecksumScenario.self] : []
StrainCommand.main(catalog: ScenarioCatalog(scenarios + duplicate))
