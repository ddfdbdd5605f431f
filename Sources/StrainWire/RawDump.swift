import StrainRecords

/// A thread dump as the child took it: raw addresses and the maps to resolve
/// them with. The parent symbolizes and groups it into a `ThreadDump`.
package struct RawDump: Codable, Sendable {
    package var method: String
    package var threads: [RawThread]
    /// /proc/self/maps when the dump was taken.
    package var maps: String
    /// Threads that did not answer the dump signal (the parent may walk them with ptrace).
    package var unanswered: [Int]
    package var dumpNanoseconds: Int
    package var waitCycle: WaitCycle?

    package init(method: String, threads: [RawThread], maps: String, unanswered: [Int], dumpNanoseconds: Int, waitCycle: WaitCycle?) {
        self.method = method
        self.threads = threads
        self.maps = maps
        self.unanswered = unanswered
        self.dumpNanoseconds = dumpNanoseconds
        self.waitCycle = waitCycle
    }

    // On the pipe, each distinct stack goes once and threads point at it: a
    // flood of 255 threads blocked in the same place is one stack, not 255.
    private enum CodingKeys: String, CodingKey {
        case method, threads, stacks, maps, unanswered, dumpNanoseconds, waitCycle
    }

    private struct WireThread: Codable {
        var tid: Int
        var name: String
        var state: String
        var wait: String?
        var inWork: Bool
        var stack: Int?
        var viaPtrace: Bool
        var framesTotal: Int?
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let stacks = try container.decode([[UInt64]].self, forKey: .stacks)
        method = try container.decode(String.self, forKey: .method)
        threads = try container.decode([WireThread].self, forKey: .threads).map { wire in
            RawThread(tid: wire.tid, name: wire.name, state: wire.state, wait: wire.wait, inWork: wire.inWork,
                      frames: wire.stack.flatMap { stacks.indices.contains($0) ? stacks[$0] : nil } ?? [], viaPtrace: wire.viaPtrace,
                      framesTotal: wire.framesTotal)
        }
        maps = try container.decode(String.self, forKey: .maps)
        unanswered = try container.decode([Int].self, forKey: .unanswered)
        dumpNanoseconds = try container.decode(Int.self, forKey: .dumpNanoseconds)
        waitCycle = try container.decodeIfPresent(WaitCycle.self, forKey: .waitCycle)
    }

    package func encode(to encoder: any Encoder) throws {
        var stacks: [[UInt64]] = []
        var index: [[UInt64]: Int] = [:]
        let wire = threads.map { thread -> WireThread in
            var stack: Int?
            if !thread.frames.isEmpty {
                stack = index[thread.frames] ?? {
                    stacks.append(thread.frames)
                    index[thread.frames] = stacks.count - 1
                    return stacks.count - 1
                }()
            }
            return WireThread(tid: thread.tid, name: thread.name, state: thread.state, wait: thread.wait,
                              inWork: thread.inWork, stack: stack, viaPtrace: thread.viaPtrace, framesTotal: thread.framesTotal)
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(wire, forKey: .threads)
        try container.encode(stacks, forKey: .stacks)
        try container.encode(maps, forKey: .maps)
        try container.encode(unanswered, forKey: .unanswered)
        try container.encode(dumpNanoseconds, forKey: .dumpNanoseconds)
        try container.encodeIfPresent(waitCycle, forKey: .waitCycle)
    }
}

/// One thread of a raw dump.
package struct RawThread: Codable, Sendable {
    package var tid: Int
    package var name: String
    package var state: String
    package var wait: String?
    package var inWork: Bool
    /// Instruction pointers, innermost first; empty when the stack was not taken.
    package var frames: [UInt64]
    package var viaPtrace: Bool
    /// How deep the stack was, where the thread walked it itself: more than `frames`
    /// when the walk kept only the innermost (a thread 50,000 frames deep).
    package var framesTotal: Int?

    package init(tid: Int, name: String, state: String, wait: String?, inWork: Bool, frames: [UInt64], viaPtrace: Bool, framesTotal: Int? = nil) {
        self.tid = tid
        self.name = name
        self.state = state
        self.wait = wait
        self.inWork = inWork
        self.frames = frames
        self.viaPtrace = viaPtrace
        self.framesTotal = framesTotal
    }
}
