// A Swift program for `strain exec`'s end-to-end tests (ExecTests): overflows
// its stack on the thread kind its first argument names. It knows nothing of
// Strain; without it, each of these dies with status 139 and, for every kind
// but main, no output at all.
import Dispatch
import Foundation

final class Node {
    var next: Node?
    var payload = [Int](repeating: 1, count: 4)
}

/// Recurses without end; the payload keeps each frame from being folded away.
@inline(never)
func descend(_ node: Node, _ depth: Int) -> Int {
    let next = Node()
    node.next = next
    return descend(next, depth + 1) + node.payload[depth % 4]
}

nonisolated func overflow() {
    print(descend(Node(), 0))
}

let kind = CommandLine.arguments.dropFirst().first ?? ""
switch kind {
case "main":
    overflow()
case "thread":
    let thread = Thread { overflow() }
    thread.start()
    while true { sleep(1) }
case "gcd":
    DispatchQueue.global().async { overflow() }
    while true { sleep(1) }
case "task":
    Task.detached { overflow() }
    while true { sleep(1) }
default:
    FileHandle.standardError.write(Data("usage: overflow main|thread|gcd|task\n".utf8))
    exit(64)
}
