import StrainKit

/// Calibration: recursion with a known frame size until the stack runs out (or
/// to a set depth), to show how deep each strategy and profile can go.
struct StackDepthScenario: Scenario {
    static let name = "stack-depth"
    static let summary = "recursion with a fixed frame size until the stack overflows (or to a set depth): usable stack per strategy"
    static let frame = Parameter<Int>.byteSize("frame", in: 16...1024, default: 512, help: "bytes each level keeps on the stack")
    static let limit = Parameter<Int>("limit", in: 0...100_000_000, default: 0, help: "stop at this depth; 0 recurses until the stack runs out")
    static let parameters: [any ParameterDeclaration] = [frame, limit]
    static let levels = Metric<Int>.count("levels", better: nil, noise: .deterministic, summary: "levels of recursion reached")
    static let metrics: [any MetricDeclaration] = [levels]
    static let typicalOutcomes = [
        TypicalOutcome(.stackOverflow, because: "with limit 0 it recurses until the stack runs out; the record says at which depth"),
        TypicalOutcome(.completed, because: "with a limit the stack holds"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"], expect: [.stackOverflow])]

    let frameBytes: Int
    let limit: Int

    /// Reads `frame` and `limit`.
    init(parameters: ParameterValues) {
        frameBytes = parameters[Self.frame]
        limit = parameters[Self.limit]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let frameBytes = frameBytes
        let limit = limit
        return { executor in
            try executor.perform {
                let reached = descend(level: 1, limit: limit, frameBytes: frameBytes)
                context.record(Self.levels, reached)
            }
        }
    }
}

/// One level keeps `frameBytes` on the stack (temporary allocations of up to
/// 1 KiB are stack-allocated) and writes to both ends so the pages are touched.
@inline(never)
func descend(level: Int, limit: Int, frameBytes: Int) -> Int {
    withUnsafeTemporaryAllocation(byteCount: frameBytes, alignment: 16) { buffer in
        buffer[0] = UInt8(truncatingIfNeeded: level)
        buffer[frameBytes - 1] = UInt8(truncatingIfNeeded: level >> 8)
        RecursionDepth.mark(level)
        if level == limit { return level }
        let deeper = descend(level: level + 1, limit: limit, frameBytes: frameBytes)
        // Reading the buffer after the call keeps this from becoming a tail call.
        return deeper &+ Int(buffer[frameBytes - 1] & 0)
    }
}
