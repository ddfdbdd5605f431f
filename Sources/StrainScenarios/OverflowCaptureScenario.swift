import StrainKit

/// Strain measuring its own fault capture: recursion with a fixed frame size until
/// the stack overflows, with the handler walking the overflowed stack one way or the
/// other, so both walks are timed side by side in one run (the record's walk and
/// capture times).
struct OverflowCaptureScenario: Scenario {
    static let name = "overflow-capture"
    static let summary = "overflows the stack with a fixed frame size and walks it with the fast trace or the unw_step loop: what catching an overflow costs"
    static let frame = Parameter<Int>.byteSize("frame", in: 16...1024, default: 64, help: "bytes each level keeps on the stack")
    static let walk = Parameter<FaultWalk>("walk", default: .fast,
                      help: "how the fault handler walks the overflowed stack: fast (libunwind's cached trace, what every trial uses) or step (the unw_step loop it falls back to)")
    static let parameters: [any ParameterDeclaration] = [frame, walk]
    static let typicalOutcomes = [
        TypicalOutcome(.stackOverflow, because: "it recurses until the stack runs out; the record says which walk made it and how long it took"),
    ]
    static let starterRuns = [StarterRun(strategies: ["thread(512KiB)", "thread(8MiB)"], expect: [.stackOverflow])]

    let frameBytes: Int
    let walk: FaultWalk

    /// Reads `frame` and `walk`.
    init(parameters: ParameterValues) {
        frameBytes = parameters[Self.frame]
        walk = parameters[Self.walk]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let frameBytes = frameBytes
        walk.use()
        return { executor in
            try executor.perform {
                _ = descend(level: 1, limit: 0, frameBytes: frameBytes)
            }
        }
    }
}
