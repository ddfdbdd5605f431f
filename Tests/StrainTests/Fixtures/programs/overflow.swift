// A Swift program for `strain exec`'s end-to-end tests (ExecTests): overflows
// its stack on the thread kind its first argument names, deadlocks or starves its GCD
// pool, starves Swift concurrency's pool or needs many GCD workers at once. It knows nothing of Strain; without it, each overflow dies with status
// 139 and, for every kind but main, no output at all.
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

/// Two blocks that take two mutexes in opposite orders, 200 ms apart: a cycle. Returns the first mutex.
func lockOrderCycle(_ group: DispatchGroup) -> UnsafeMutablePointer<pthread_mutex_t> {
    let first = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    let second = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(first, nil)
    pthread_mutex_init(second, nil)
    DispatchQueue.global().async(group: group) { pthread_mutex_lock(first); usleep(200_000); pthread_mutex_lock(second) }
    DispatchQueue.global().async(group: group) { pthread_mutex_lock(second); usleep(200_000); pthread_mutex_lock(first) }
    return first
}

/// An actor whose method waits on a semaphore that work it queued to itself signals: that
/// work cannot start while the method holds the actor.
actor SelfWaiter {
    func bump() {}

    func waitOnItsOwnWork() {
        let done = DispatchSemaphore(value: 0)
        Task { self.bump(); done.signal() }
        done.wait()
    }
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
case "gcd-deadlock":
    // Two blocks wait for a semaphore no one signals; main waits for them.
    let group = DispatchGroup()
    let never = DispatchSemaphore(value: 0)
    for _ in 0..<2 { DispatchQueue.global().async(group: group) { never.wait() } }
    print("ready \(getpid())")
    fflush(stdout)
    group.wait()
case "gcd-starve":
    // 300 blocks on the global queue: all but the last wait for a semaphore only the
    // last signals, and libdispatch gives the last a thread only after 299 others
    // (one more a second while every worker is blocked, up to 255): a starved pool.
    let count = 300
    let release = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    for index in 0..<count {
        DispatchQueue.global().async {
            if index == count - 1 {
                for _ in 1..<count { release.signal() }
                done.signal()
            } else {
                release.wait()
            }
        }
    }
    print("ready \(getpid())")
    fflush(stdout)
    done.wait()
case "gcd-cycle-crowd":
    // A lock-order cycle, and 100 more blocks waiting for its first mutex: the pool grows a
    // worker a second, each blocking on the cycle.
    let group = DispatchGroup()
    let first = lockOrderCycle(group)
    usleep(100_000)
    for _ in 0..<100 { DispatchQueue.global().async(group: group) { pthread_mutex_lock(first) } }
    print("ready \(getpid())")
    fflush(stdout)
    group.wait()
case "gcd-lock-order":
    // A lock-order cycle of two blocks; main waits for them.
    let group = DispatchGroup()
    _ = lockOrderCycle(group)
    print("ready \(getpid())")
    fflush(stdout)
    group.wait()
case "gcd-deadlock-parked":
    // Two blocks each wait for a semaphore the other signals after its own wait; the main
    // thread parks in dispatchMain().
    let first = DispatchSemaphore(value: 0)
    let second = DispatchSemaphore(value: 0)
    DispatchQueue.global().async { first.wait(); second.signal() }
    DispatchQueue.global().async { second.wait(); first.signal() }
    print("ready \(getpid())")
    fflush(stdout)
    dispatchMain()
case "gcd-slow":
    // Two blocks wait for a semaphore the main thread signals after sleeping 4 s: slow, not stuck.
    let go = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for _ in 0..<2 { DispatchQueue.global().async(group: group) { go.wait() } }
    sleep(4)
    go.signal()
    go.signal()
    group.wait()
    print("done")
case "gcd-timer":
    // Two blocks wait for a semaphore that a block asyncAfter runs in 4 s signals, and the main
    // thread waits for the two: every thread waits with no timeout until the timer fires.
    let go = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for _ in 0..<2 { DispatchQueue.global().async(group: group) { go.wait() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + 4) { go.signal(); go.signal() }
    group.wait()
    print("done")
case "gcd-sigwait":
    // Two blocks wait for a semaphore that a thread signals once its sigwait for SIGALRM,
    // which alarm(4) raises, returns; main waits for the two: slow, not stuck (a kernel
    // timer ends the sigwait, a wait with no timeout of its own).
    var alarmSignal = sigset_t()
    sigemptyset(&alarmSignal)
    sigaddset(&alarmSignal, SIGALRM)
    pthread_sigmask(SIG_BLOCK, &alarmSignal, nil)
    let go = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for _ in 0..<2 { DispatchQueue.global().async(group: group) { go.wait() } }
    let waiter = Thread {
        var caught: Int32 = 0
        sigwait(&alarmSignal, &caught)
        go.signal()
        go.signal()
    }
    waiter.start()
    alarm(4)
    group.wait()
    print("done")
case "gcd-read-source":
    // Two blocks wait for a semaphore that a read source on standard input signals when a
    // line arrives (a pipe written from outside); the main thread parks in dispatchMain():
    // libdispatch's event thread waits in epoll for the pipe.
    let go = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for _ in 0..<2 { DispatchQueue.global().async(group: group) { go.wait() } }
    let input = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
    input.setEventHandler {
        var line = [UInt8](repeating: 0, count: 64)
        _ = read(0, &line, line.count)
        input.cancel()
        go.signal()
        go.signal()
    }
    input.resume()
    group.notify(queue: .main) {
        print("done")
        exit(0)
    }
    print("ready \(getpid())")
    fflush(stdout)
    dispatchMain()
case "task-starve":
    // As many tasks as the cooperative pool has threads block on a semaphore; the
    // next task never runs; main sleeps (a wait with a timeout).
    let never = DispatchSemaphore(value: 0)
    for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
        Task.detached { never.wait() }
    }
    Task.detached { print("never runs") }
    print("ready \(getpid())")
    fflush(stdout)
    while true { sleep(1) }
case "task-actor-self":
    // A job waits for work queued to its own actor, with the pool's other threads free; the
    // main thread parks in dispatchMain(), as an async main does.
    Task.detached { await SelfWaiter().waitOnItsOwnWork() }
    print("ready \(getpid())")
    fflush(stdout)
    dispatchMain()
case "gcd-wide":
    // 100 private serial queues, a blocked block on each: libdispatch starts a
    // worker for each (its overcommit pool), more than Apple's cap of 64.
    let group = DispatchGroup()
    let release = DispatchSemaphore(value: 0)
    let started = DispatchSemaphore(value: 0)
    for index in 0..<100 {
        DispatchQueue(label: "wide.\(index)").async(group: group) {
            started.signal()
            release.wait()
        }
    }
    for _ in 0..<100 { started.wait() }
    usleep(600_000)  // long enough for strain exec to count the workers
    for _ in 0..<100 { release.signal() }
    group.wait()
    print("done")
case "index-out-of-range":
    // The runtime's "Fatal error: Index out of range", then a trap.
    let numbers = [1, 2]
    print(numbers[CommandLine.arguments.count + 3])
case "multi-line-fatal":
    // A precondition's message over several lines, as SwiftNIO's debug builds print
    // them: the runtime's "…: Fatal error: BUG DETECTED: …" and then the details.
    preconditionFailure("""
        BUG DETECTED: wait() must not be called when on an EventLoop.
        Calling wait() on any EventLoop can lead to
        - deadlocks

        Further information:
        - event loop associated to future: SelectableEventLoop { descriptor = \(CommandLine.arguments.count + 1) }
        """)
case "precondition":
    // In an optimised (-O) build the check traps without its message.
    precondition(CommandLine.arguments.count > 5, "the message an -O build drops")
    print("passed")
default:
    FileHandle.standardError.write(Data("usage: overflow main|thread|gcd|task|gcd-deadlock|gcd-starve|gcd-cycle-crowd|gcd-lock-order|gcd-deadlock-parked|gcd-slow|gcd-timer|task-starve|task-actor-self|gcd-wide|index-out-of-range|multi-line-fatal|precondition\n".utf8))
    exit(64)
}
