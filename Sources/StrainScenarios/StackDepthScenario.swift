import StrainKit

/// Calibration: recursion with a known frame size until the stack runs out (or
/// to a set depth), to show how deep each strategy and profile can go.
public struct StackDepthScenario: Scenario {
    public static let name = "stack-depth"
    public static let summary = "recursion with a fixed frame size until the stack overflows (or to a set depth): usable stack per strategy"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("frame", .byteSize(16...1024), default: "512B", summary: "bytes each level keeps on the stack"),
        ParameterSpec("limit", .integer(0...100_000_000), default: "0", summary: "stop at this depth; 0 recurses until the stack runs out"),
    ]

    let frameBytes: Int
    let limit: Int

    public init(parameters: ParameterValues) {
        frameBytes = parameters.byteSize("frame")
        limit = parameters.integer("limit")
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let frameBytes = frameBytes
        let limit = limit
        return { executor in
            try executor.perform {
                let reached = descend(level: 1, limit: limit, frameBytes: frameBytes)
                context.record("levels", Double(reached))
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
