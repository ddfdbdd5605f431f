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

/// The parent's watch over one running child: polls its three pipes into bounded
/// buffers, samples /proc, enforces the deadline with explicit teardown steps,
/// answers a remote-unwind request, and stops at once for a runner stop signal.
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
        var steps = teardown[...]
        var nextStepAt: UInt64?
        var reaped = false
        var remoteUnwindDone = false
        var nextSample: UInt64 = 0
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
            if !reaped, !watched.stoppedByRunner, RunnerSignals.stopSignal != nil {
                // The runner is stopping: the trial in flight and all it started die now.
                watched.stoppedByRunner = true
                child.signalGroup(SIGKILL)
            }
            if !reaped {
                if now >= deadline && !watched.timedOut {
                    watched.timedOut = true
                    if !ChildProtocol.decode(watched.result.bytes, final: false).saysHowItEnded {
                        // Too wedged to report: see where its threads are before stopping it.
                        watched.deadlineHeartbeat = heartbeat?.read()
                        watched.deadlineAt = now
                        watched.deadlineDump = TrialSupervisor.ptraceDump(pid: child.pid)
                    }
                    nextStepAt = now
                }
                if let at = nextStepAt, now >= at, let step = steps.popFirst() {
                    child.signalGroup(step.signal)
                    nextStepAt = steps.isEmpty ? nil : now &+ TrialSpec.nanoseconds(step.graceSeconds)
                }
                if now >= nextSample {
                    sample(statusPath, now: now, start: start, into: &watched)
                    if let limit = threadLimit, watched.peakThreads > limit, watched.overThreadLimit == nil {
                        watched.overThreadLimit = limit
                        child.signalGroup(SIGKILL)
                    }
                    nextSample = now &+ TrialSpec.nanoseconds(samplingInterval)
                }
                if let (termination, usage) = child.reapIfEnded() {
                    watched.termination = termination
                    watched.usage = usage
                    reaped = true
                    // Whatever the child started dies with it.
                    child.signalGroup(SIGKILL)
                }
            }
            let remaining = deadline > now ? Double(deadline - now) / 1e6 : 0
            let timeout: Int32 = reaped ? 0 : Int32(max(1, min(samplingInterval * 1000, remaining)))
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
                    if !remoteUnwindDone, !reaped, let tids = ChildProtocol.pendingRemoteUnwind(in: watched.result.bytes) {
                        // The child dumped what it could and waits, blocked threads and all: walk the rest from here.
                        remoteUnwindDone = true
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
        if let last = watched.timeline.last {
            watched.timeline.append(ThreadSample(seconds: Double(strain_monotonic_ns() - start) / 1e9, threads: last.threads))
        }
        return watched
    }

    /// Reads the child's thread count and peak RSS from /proc.
    private func sample(_ statusPath: String, now: UInt64, start: UInt64, into watched: inout Watched) {
        guard let status = ProcessStatus.read(statusPath) else { return }
        let threads = status.threads ?? 0
        watched.peakThreads = max(watched.peakThreads, threads)
        watched.peakRSSBytes = max(watched.peakRSSBytes, status.peakRSSBytes ?? 0)
        if threads > 0, watched.timeline.last?.threads != threads {
            watched.timeline.append(ThreadSample(seconds: Double(now - start) / 1e9, threads: threads))
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
