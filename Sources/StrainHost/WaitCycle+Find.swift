import StrainKit

extension WaitCycle {
    /// The cycle the given waits close, if any: each thread holds what the next
    /// one waits for. A thread that waits for what it holds itself is a cycle of one.
    package static func find(in waits: [WaitRegistry.Wait]) -> WaitCycle? {
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
