package import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainKit
import StrainWire

/// What the parent saw of one child, for `OutcomeClassifier`.
package struct Watched: Sendable {
    package var result = BoundedBuffer(cap: 0)
    package var output = BoundedBuffer(cap: 0)
    package var error = BoundedBuffer(cap: 0)
    /// How it ended; nil only when it was never reaped (it cannot be: the watch waits).
    package var termination: TerminationStatus?
    package var usage = rusage()
    package var timedOut = false
    /// A stop signal reached the runner and the child was killed for it.
    package var stoppedByRunner = false
    /// The child went over its thread limit and was killed for it.
    package var overThreadLimit: Int?
    package var peakThreads = 0
    /// The child's own peak RSS (VmHWM) as last sampled.
    package var peakRSSBytes = 0
    /// The thread count where it changed, seconds after the spawn.
    package var timeline: [ThreadSample] = []
    /// CLOCK_MONOTONIC of the last read from the result pipe.
    package var lastResultRead: UInt64 = 0
    /// Threads the child could not dump itself, walked here with ptrace.
    package var remoteStacks: [Int: RemoteUnwinder.Stack] = [:]
    /// The child's threads as walked with ptrace at the deadline, when it had not reported.
    package var deadlineDump: RawDump?
    /// The child's heartbeat at the deadline, and when it was read.
    package var deadlineHeartbeat: strain_heartbeat?
    package var deadlineAt: UInt64 = 0

    package init() {}
}

/// What the watch does to a running child and when, apart from any I/O: a small state
/// machine fed the time, whose every step can be tested alone with made-up times
/// (`WatchScheduleTests`). `ChildWatch` carries out its actions.
struct WatchSchedule: Sendable {
    /// One thing to do to the child now.
    enum Action: Hashable, Sendable {
        /// A stop signal reached the runner: the child and all it started die now (once).
        case stopForRunner
        /// The deadline passed (once): see where the child is before it is torn down.
        case deadlinePassed
        /// Send this signal to the child's process group (a teardown step, or the thread limit).
        case signalGroup(Int32)
        /// Read /proc now.
        case sample
    }

    let deadline: UInt64
    let samplingNanoseconds: UInt64
    /// Threads the child may have; past it the group is killed (nil: no limit).
    let threadLimit: Int?
    private var steps: ArraySlice<TeardownStep>
    private var nextStepAt: UInt64?
    private var nextSampleAt: UInt64 = 0
    private(set) var stopped = false
    private(set) var timedOut = false
    /// The limit the child went over, once it has.
    private(set) var overThreadLimit: Int?
    /// Whether the child's request for a remote unwind was answered (it is, once).
    private(set) var remoteUnwindDone = false

    init(deadline: UInt64, samplingInterval: Double, teardown: [TeardownStep], threadLimit: Int?) {
        self.deadline = deadline
        samplingNanoseconds = TrialSpec.nanoseconds(samplingInterval)
        self.threadLimit = threadLimit
        steps = teardown[...]
    }

    /// What is due at `now` while the child runs, in the order to do it: the runner's
    /// stop, the deadline, the next teardown step (the first at the deadline, each
    /// next after the step's grace), a sample.
    mutating func due(now: UInt64, stopRequested: Bool) -> [Action] {
        var actions: [Action] = []
        if stopRequested, !stopped {
            stopped = true
            actions.append(.stopForRunner)
        }
        if now >= deadline, !timedOut {
            timedOut = true
            actions.append(.deadlinePassed)
            nextStepAt = now
        }
        if let at = nextStepAt, now >= at, let step = steps.popFirst() {
            actions.append(.signalGroup(step.signal))
            nextStepAt = steps.isEmpty ? nil : now &+ TrialSpec.nanoseconds(step.graceSeconds)
        }
        if now >= nextSampleAt {
            actions.append(.sample)
            nextSampleAt = now &+ samplingNanoseconds
        }
        return actions
    }

    /// After a sample that saw `peakThreads`: SIGKILL to the group, once, when that is over the limit.
    mutating func sampled(peakThreads: Int) -> Action? {
        guard let threadLimit, peakThreads > threadLimit, overThreadLimit == nil else { return nil }
        overThreadLimit = threadLimit
        return .signalGroup(SIGKILL)
    }

    /// The tids to walk from the parent, once: when a running child's result pipe holds
    /// a complete request (it dumped what it could and waits, blocked threads and all).
    mutating func remoteUnwind(result bytes: [UInt8], reaped: Bool) -> [Int]? {
        guard !remoteUnwindDone, !reaped, let tids = ChildProtocol.pendingRemoteUnwind(in: bytes) else { return nil }
        remoteUnwindDone = true
        return tids
    }

    /// Milliseconds a poll may wait at `now`: none once the child is reaped (only what
    /// is buffered is drained), else until the next sample or the deadline, at least 1.
    func pollMilliseconds(now: UInt64, reaped: Bool) -> Int32 {
        guard !reaped else { return 0 }
        let remaining = deadline > now ? Double(deadline - now) / 1e6 : 0
        return Int32(max(1, min(Double(samplingNanoseconds) / 1e6, remaining)))
    }
}

/// The parent's watch over one running child: polls its three pipes into bounded
/// buffers, samples /proc, and carries out its `WatchSchedule` (the deadline and the
/// teardown steps, the thread limit, a remote-unwind request, a runner stop signal).
struct ChildWatch {
    var outputCap: Int
    var resultCap: Int
    var teardown: [TeardownStep]
    var samplingInterval: Double
    /// Threads the child may have; past it the group is killed (nil: no limit).
    var threadLimit: Int?

    func watch(_ child: ChildProcess, start: UInt64, deadline: UInt64, heartbeat: SharedHeartbeat?) -> Watched {
        var watched = Watched()
        watched.result = BoundedBuffer(cap: resultCap)
        watched.output = BoundedBuffer(cap: outputCap)
        watched.error = BoundedBuffer(cap: outputCap)
        var open: [Int32: WritableKeyPath<Watched, BoundedBuffer>] = [
            child.resultDescriptor: \.result, child.outputDescriptor: \.output, child.errorDescriptor: \.error,
        ]
        var schedule = WatchSchedule(deadline: deadline, samplingInterval: samplingInterval, teardown: teardown, threadLimit: threadLimit)
        var reaped = false
        let statusPath = "/proc/\(child.pid)/status"
        var chunk = [UInt8](repeating: 0, count: 65536)
        // Readable once the child has ended (a zombie to reap): the watch wakes for
        // its end as for its output, rather than looking every half millisecond
        // (which cost a noop trial about 0.5 ms between its pipes closing and its reaping).
        let endDescriptor = strain_pidfd_open(child.pid)
        defer { if endDescriptor >= 0 { close(endDescriptor) } }
        // Times the end was seen and the child still not reaped: past one, something
        // else reaped it, and the descriptor (readable for good) is no longer waited on.
        var endSeen = 0

        while !reaped || !open.isEmpty {
            let now = strain_monotonic_ns()
            if !reaped {
                for action in schedule.due(now: now, stopRequested: RunnerSignals.stopSignal != nil) {
                    carryOut(action, on: child, now: now, heartbeat: heartbeat, statusPath: statusPath, start: start, schedule: &schedule, into: &watched)
                }
                if let (termination, usage) = child.reapIfEnded() {
                    watched.termination = termination
                    watched.usage = usage
                    reaped = true
                    // Whatever the child started dies with it.
                    child.signalGroup(SIGKILL)
                }
            }
            let timeout = schedule.pollMilliseconds(now: now, reaped: reaped)
            if open.isEmpty {
                guard !reaped else { continue }
                if endDescriptor >= 0, endSeen < 2 {
                    var end = pollfd(fd: endDescriptor, events: Int16(POLLIN), revents: 0)
                    if poll(&end, 1, timeout) > 0 { endSeen += 1 }
                } else {
                    usleep(500)
                }
                continue
            }
            var descriptors = open.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            // The child's end wakes the watch too (a grandchild may hold its pipes open).
            if !reaped, endDescriptor >= 0, endSeen < 2 { descriptors.append(pollfd(fd: endDescriptor, events: Int16(POLLIN), revents: 0)) }
            // After the child is reaped, drain what is buffered without waiting on grandchildren.
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready <= 0 {
                if reaped { open.keys.forEach { close($0) }; open.removeAll() }
                continue
            }
            if descriptors.contains(where: { $0.fd == endDescriptor && $0.revents != 0 }) { endSeen += 1 }
            for descriptor in descriptors where descriptor.revents != 0 && descriptor.fd != endDescriptor {
                let count = read(descriptor.fd, &chunk, chunk.count)
                if count > 0 {
                    if let path = open[descriptor.fd] { watched[keyPath: path].append(chunk[0..<count]) }
                    guard descriptor.fd == child.resultDescriptor else { continue }
                    watched.lastResultRead = strain_monotonic_ns()
                    if let tids = schedule.remoteUnwind(result: watched.result.bytes, reaped: reaped) {
                        let giveUp = strain_monotonic_ns() &+ TrialSpec.nanoseconds(RemoteUnwinder.budgetSeconds)
                        for tid in tids where strain_monotonic_ns() < giveUp {
                            if let stack = RemoteUnwinder.stack(pid: child.pid, tid: tid) { watched.remoteStacks[tid] = stack }
                        }
                        child.signalGroup(SIGKILL)
                    }
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    close(descriptor.fd)
                    open[descriptor.fd] = nil
                }
            }
        }
        watched.closeTimeline(end: strain_monotonic_ns(), start: start)
        return watched
    }

    /// One of the schedule's actions, done to the child.
    private func carryOut(_ action: WatchSchedule.Action, on child: ChildProcess, now: UInt64, heartbeat: SharedHeartbeat?,
                          statusPath: String, start: UInt64, schedule: inout WatchSchedule, into watched: inout Watched) {
        switch action {
        case .stopForRunner:
            watched.stoppedByRunner = true
            child.signalGroup(SIGKILL)
        case .deadlinePassed:
            watched.timedOut = true
            if !ChildProtocol.decode(watched.result.bytes, final: false).saysHowItEnded {
                // Too wedged to report: see where its threads are before stopping it.
                watched.deadlineHeartbeat = heartbeat?.read()
                watched.deadlineAt = now
                watched.deadlineDump = TrialSupervisor.ptraceDump(pid: child.pid)
            }
        case .signalGroup(let signal):
            child.signalGroup(signal)
        case .sample:
            watched.sample(statusPath, now: now, start: start)
            if let kill = schedule.sampled(peakThreads: watched.peakThreads) {
                watched.overThreadLimit = schedule.overThreadLimit
                carryOut(kill, on: child, now: now, heartbeat: heartbeat, statusPath: statusPath, start: start, schedule: &schedule, into: &watched)
            }
        }
    }
}

/// Keeps the first `cap` bytes of a stream and counts the rest.
package struct BoundedBuffer: Sendable {
    package let cap: Int
    package private(set) var bytes: [UInt8] = []
    package private(set) var dropped = 0

    package init(cap: Int) { self.cap = cap }

    package mutating func append(_ chunk: ArraySlice<UInt8>) {
        let room = max(0, cap - bytes.count)
        bytes.append(contentsOf: chunk.prefix(room))
        dropped += max(0, chunk.count - room)
    }

    /// The kept text, with a note of what was dropped; nil when there was none.
    package var text: String? {
        guard !bytes.isEmpty || dropped > 0 else { return nil }
        let kept = String(decoding: bytes, as: UTF8.self)
        return dropped > 0 ? kept + "\n[… \(dropped) more bytes not kept]" : kept
    }
}

/// The 4 KiB memfd that holds a child's heartbeat, mapped in the parent too.
final class SharedHeartbeat {
    let descriptor: Int32
    private let block: UnsafeMutableRawPointer

    init?() {
        let fd = strain_heartbeat_create_shared()
        guard fd >= 0 else { return nil }
        guard let block = strain_heartbeat_map(fd) else {
            Glibc.close(fd)
            return nil
        }
        descriptor = fd
        self.block = block
    }

    func read() -> strain_heartbeat { strain_heartbeat_read_mapped(block) }

    func close() {
        strain_heartbeat_unmap(block)
        Glibc.close(descriptor)
    }
}
