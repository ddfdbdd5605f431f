import StrainKit

/// A thread dump as the child took it: raw addresses and the maps to resolve
/// them with. The parent symbolizes and groups it into a `ThreadDump`.
public struct RawDump: Codable, Sendable {
    public var method: String
    public var threads: [RawThread]
    /// /proc/self/maps when the dump was taken.
    public var maps: String
    /// Threads that did not answer the dump signal (the parent may walk them with ptrace).
    public var unanswered: [Int]
    public var dumpNanoseconds: Int
    public var waitCycle: WaitCycle?

    public init(method: String, threads: [RawThread], maps: String, unanswered: [Int], dumpNanoseconds: Int, waitCycle: WaitCycle?) {
        self.method = method
        self.threads = threads
        self.maps = maps
        self.unanswered = unanswered
        self.dumpNanoseconds = dumpNanoseconds
        self.waitCycle = waitCycle
    }
}

/// One thread of a raw dump.
public struct RawThread: Codable, Sendable {
    public var tid: Int
    public var name: String
    public var state: String
    public var wait: String?
    public var inWork: Bool
    /// Instruction pointers, innermost first; empty when the stack was not taken.
    public var frames: [UInt64]
    public var viaPtrace: Bool

    public init(tid: Int, name: String, state: String, wait: String?, inWork: Bool, frames: [UInt64], viaPtrace: Bool) {
        self.tid = tid
        self.name = name
        self.state = state
        self.wait = wait
        self.inWork = inWork
        self.frames = frames
        self.viaPtrace = viaPtrace
    }
}

extension WaitCycle {
    /// The cycle the given waits close, if any: each thread holds what the next
    /// one waits for. A thread that waits for what it holds itself is a cycle of one.
    public static func find(in waits: [WaitRegistry.Wait]) -> WaitCycle? {
        // The innermost wait of each thread is the one it is blocked in.
        var waitByThread: [Int: WaitRegistry.Wait] = [:]
        for wait in waits { waitByThread[wait.tid] = wait }
        var holder: [String: Int] = [:]
        for wait in waits { if let held = wait.holding { holder[held] = wait.tid } }
        for start in waitByThread.keys.sorted() {
            var path: [Int] = []
            var current: Int? = start
            while let tid = current, let wait = waitByThread[tid] {
                if let index = path.firstIndex(of: tid) {
                    let links = path[index...].map { tid in
                        WaitLink(tid: tid, holding: waitByThread[tid]!.holding, waitsFor: waitByThread[tid]!.resource)
                    }
                    return WaitCycle(description: describe(links), links: links)
                }
                path.append(tid)
                current = holder[wait.resource]
            }
        }
        return nil
    }

    static func describe(_ links: [WaitLink]) -> String {
        if links.count == 1, let link = links.first {
            return "thread \(link.tid) holds \(link.holding ?? "?") and waits for \(link.waitsFor), which only it can release"
        }
        let parts = links.map { "thread \($0.tid) holds \($0.holding ?? "?") and waits for \($0.waitsFor)" }
        return parts.joined(separator: "; ") + " (a cycle: none can go on)"
    }
}
