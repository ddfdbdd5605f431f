// A counter two GCD blocks increment without a lock: a Swift access race and a data
// race for `strain exec` to record (ExecSanitizerTests). Build with -sanitize=thread.
// Both blocks first wait for each other, so they run on two workers at once (blocks
// that finish fast can run one after the other on a single worker, where there is no race).
import Dispatch

final class Counter: @unchecked Sendable {  // unchecked on purpose: the race is the point
    var value = 0
}

let counter = Counter()
let group = DispatchGroup()
let arrived = DispatchSemaphore(value: 0)
let start = DispatchSemaphore(value: 0)
for _ in 0..<2 {
    DispatchQueue.global().async(group: group) {
        arrived.signal()
        start.wait()
        for _ in 0..<1000 { counter.value += 1 }
    }
}
for _ in 0..<2 { arrived.wait() }
for _ in 0..<2 { start.signal() }
group.wait()
print("counter \(counter.value)")
