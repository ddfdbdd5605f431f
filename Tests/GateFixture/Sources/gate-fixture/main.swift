import Dispatch
import StrainCLI
import StrainKit
import StrainScenarios

/// Busy work whose amount a build can change: a timing row for the gate.
struct SpinScenario: Scenario {
    static let name = "spin"
    static let summary = "hashes a counter `work` times on the strategy"
    static let work = Parameter<Int>("work", in: 1...1_000_000_000, default: 1_000_000, help: "iterations of the loop")
    static let parameters: [any ParameterDeclaration] = [work]
    static let hash = Metric<Int>.count("hash", better: nil, noise: .deterministic, summary: "the loop's last hash, low byte (kept so the loop is not optimized away)")
    static let metrics: [any MetricDeclaration] = [hash]

    let work: Int

    init(parameters: ParameterValues) {
        work = parameters[Self.work] * plantedWorkPercent / 100
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let work = work
        return { executor in
            try executor.perform {
                var hash: UInt64 = 0xcbf2_9ce4_8422_2325
                for value in 0..<work {
                    hash ^= UInt64(truncatingIfNeeded: value)
                    hash &*= 0x0000_0100_0000_01b3
                }
                context.record(Self.hash, Int(hash & 0xFF))
            }
        }
    }
}

/// Recursion whose frame size a build can change: a stack row for the gate.
struct FramesScenario: Scenario {
    static let name = "frames"
    static let summary = "recurses `depth` levels, each keeping the build's frame on the stack"
    static let depth = Parameter<Int>("depth", in: 1...100_000, default: 2000, help: "levels of recursion")
    static let parameters: [any ParameterDeclaration] = [depth]

    let depth: Int

    init(parameters: ParameterValues) {
        depth = parameters[Self.depth]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let depth = depth
        return { executor in
            try executor.perform { _ = descendFrames(1, of: depth) }
        }
    }
}

/// One level keeps `plantedFrameBytes` on the stack and touches both ends.
@inline(never)
func descendFrames(_ level: Int, of depth: Int) -> Int {
    withUnsafeTemporaryAllocation(byteCount: plantedFrameBytes, alignment: 16) { buffer in
        buffer[0] = UInt8(truncatingIfNeeded: level)
        buffer[plantedFrameBytes - 1] = UInt8(truncatingIfNeeded: level >> 8)
        RecursionDepth.mark(level)
        if level == depth { return level }
        let deeper = descendFrames(level + 1, of: depth)
        // Reading the buffer after the call keeps this from becoming a tail call.
        return deeper &+ Int(buffer[plantedFrameBytes - 1] & 0)
    }
}

/// A list built node by node, whose allocations a build can change: a counted row for the gate.
struct NodesScenario: Scenario {
    static let name = "nodes"
    static let summary = "builds a list of `count` nodes, each a class instance"
    static let count = Parameter<Int>("count", in: 1...1_000_000, default: 1000, help: "nodes in the list")
    static let parameters: [any ParameterDeclaration] = [count]
    static let nodes = Metric<Int>.count("nodes", better: nil, noise: .deterministic, summary: "nodes in the list")
    static let metrics: [any MetricDeclaration] = [nodes]

    let count: Int

    init(parameters: ParameterValues) {
        count = parameters[Self.count]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let count = count
        return { executor in
            try executor.perform { context.record(Self.nodes, buildNodes(count)) }
        }
    }
}

final class Node {
    let value: Int
    var next: Node?
    var tags: [Int] = []

    init(value: Int, next: Node?) {
        self.value = value
        self.next = next
    }
}

/// Builds the list and returns its length; the planted build tags each node too.
@inline(never)
func buildNodes(_ count: Int) -> Int {
    var head: Node?
    for value in 0..<count {
        let node = Node(value: value, next: head)
        for _ in 0..<plantedAllocationsPerNode { node.tags = [value] }
        head = node
    }
    var length = 0
    while let node = head {
        length += 1
        // Unlinked one by one: a long chain released at once would recurse.
        head = node.next
        node.next = nil
    }
    return length
}

/// Work in a task split by an `await`: a counted trial must count the part after it,
/// which the cooperative pool may resume on another thread.
struct AwaitSpinScenario: Scenario {
    static let name = "await-spin"
    static let summary = "hashes a counter `work` times in a task, awaits, and hashes it again (planted: the second part's share)"
    static let work = Parameter<Int>("work", in: 1...1_000_000_000, default: 1_000_000, help: "iterations before the await, and after it in the base build")
    static let parameters: [any ParameterDeclaration] = [work]
    static let hash = Metric<Int>.count("hash", better: nil, noise: .deterministic, summary: "the last hash, low byte (kept so the loops are not optimized away)")
    static let metrics: [any MetricDeclaration] = [hash]

    let work: Int

    init(parameters: ParameterValues) {
        work = parameters[Self.work]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let before = work
        let after = work * plantedAfterAwaitPercent / 100
        return { executor in
            try executor.perform {
                let done = DispatchSemaphore(value: 0)
                Task.detached {
                    await context.unitAsync {
                        let first = spin(before, from: 0xcbf2_9ce4_8422_2325)
                        // Resumed from a GCD thread: the rest runs wherever the pool picks it up.
                        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
                            DispatchQueue.global().async { resume.resume() }
                        }
                        context.record(Self.hash, Int(spin(after, from: first) & 0xFF))
                    }
                    done.signal()
                }
                done.wait()
            }
        }
    }
}

/// `count` rounds of FNV-1a over a counter, from `hash`.
func spin(_ count: Int, from hash: UInt64) -> UInt64 {
    var hash = hash
    for value in 0..<count {
        hash ^= UInt64(truncatingIfNeeded: value)
        hash &*= 0x0000_0100_0000_01b3
    }
    return hash
}

StrainCommand.main(catalog: ScenarioCatalog([SpinScenario.self, FramesScenario.self, NodesScenario.self, AwaitSpinScenario.self]) + .builtIn)
