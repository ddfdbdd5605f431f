import CStrainProbe
import Foundation
import Glibc
import StrainKit

/// The parent's side of a trial: starts the child, reads what it says with
/// bounds, enforces the deadline, and turns whatever happened into a record.
///
/// A child that crashes, hangs, floods its output or closes its pipes ends up
/// as that trial's outcome; it never takes the supervisor down.
public struct TrialSupervisor: Sendable {
    /// The `strain` binary children re-enter through `_trial`.
    public var executable: String
    /// Bytes of standard output and of standard error kept per trial.
    public var outputCap = 64 * 1024
    /// Bytes of the result pipe kept per trial (a fault record with 262,144 frames is ~5 MB).
    public var resultCap = 64 * 1024 * 1024
    /// Seconds between SIGTERM and SIGKILL at a deadline.
    public var gracePeriod = 1.0
    /// Seconds between samples of the child's thread count.
    public var samplingInterval = 0.005
    /// Points kept in a trial's thread-count timeline; longer ones are thinned.
    public var timelineCap = 2000
    public let traceBuilder: TraceBuilder
    public let dumpBuilder: ThreadDumpBuilder
    /// Names the frames of confinement violations.
    let symbolizer: Symbolizer

    public init(executable: String, symbolizer: Symbolizer = Symbolizer()) {
        self.executable = executable
        self.traceBuilder = TraceBuilder(symbolizer: symbolizer)
        self.dumpBuilder = ThreadDumpBuilder(symbolizer: symbolizer)
        self.symbolizer = symbolizer
    }

    public func run(_ spec: TrialSpec) -> TrialRecord {
        let startedAt = Date().formatted(.iso8601)
        let specJSON: String
        do {
            specJSON = String(decoding: try JSONEncoder().encode(spec), as: UTF8.self)
        } catch {
            return TrialRecord(graded: spec, outcome: TrialOutcome(kind: .harnessError, message: "could not encode the trial spec: \(error)"),
                               metrics: TrialMetrics(), trace: nil, stdout: nil, stderr: nil, startedAt: startedAt)
        }
        var environment = ProcessInfo.processInfo.environment
        // Swift's own backtracer would race our handler for the same signals.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        // The heartbeat in shared memory, so a child too wedged to report can still be judged at its deadline.
        let heartbeat = SharedHeartbeat()
        defer { heartbeat?.close() }
        if heartbeat != nil { environment[SharedHeartbeat.environmentKey] = String(ChildProcess.sharedDescriptor) }
        let start = strain_monotonic_ns()
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(executable: executable, arguments: ["_trial", specJSON],
                                           environment: environment.map { "\($0.key)=\($0.value)" }, shared: heartbeat?.descriptor)
        } catch {
            return TrialRecord(graded: spec, outcome: TrialOutcome(kind: .harnessError, message: error.description),
                               metrics: TrialMetrics(), trace: nil, stdout: nil, stderr: nil, startedAt: startedAt)
        }
        let watched = watch(child, start: start, deadline: start + UInt64(spec.timeoutSeconds * 1e9), heartbeat: heartbeat)
        let elapsed = Double(strain_monotonic_ns() - start) / 1e9
        return record(spec, watched, trialSeconds: elapsed, startedAt: startedAt)
    }

    /// What the parent saw of one child.
    struct Watched {
        var result = BoundedBuffer(cap: 0)
        var output = BoundedBuffer(cap: 0)
        var error = BoundedBuffer(cap: 0)
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        var peakThreads = 0
        /// The child's own peak RSS (VmHWM) as last sampled.
        var peakRSSBytes = 0
        /// The thread count where it changed, seconds after the spawn.
        var timeline: [ThreadSample] = []
        /// CLOCK_MONOTONIC of the last read from the result pipe.
        var lastResultRead: UInt64 = 0
        /// Threads the child could not dump itself, walked here with ptrace.
        var remoteStacks: [Int: RemoteUnwinder.Stack] = [:]
        var remoteUnwindDone = false
        /// The child's threads as walked with ptrace at the deadline, when it had not reported.
        var deadlineDump: RawDump?
        /// The child's heartbeat at the deadline, and when it was read.
        var deadlineHeartbeat: strain_heartbeat?
        var deadlineAt: UInt64 = 0
    }

    private func watch(_ child: ChildProcess, start: UInt64, deadline: UInt64, heartbeat: SharedHeartbeat?) -> Watched {
        var watched = Watched(result: BoundedBuffer(cap: resultCap), output: BoundedBuffer(cap: outputCap), error: BoundedBuffer(cap: outputCap))
        var open: [Int32: WritableKeyPath<Watched, BoundedBuffer>] = [
            child.resultDescriptor: \.result, child.outputDescriptor: \.output, child.errorDescriptor: \.error,
        ]
        var killAt: UInt64?
        var reaped = false
        var nextSample: UInt64 = 0
        let statusPath = "/proc/\(child.pid)/status"
        var chunk = [UInt8](repeating: 0, count: 65536)

        while !reaped || !open.isEmpty {
            let now = strain_monotonic_ns()
            if !reaped {
                if now >= deadline && !watched.timedOut {
                    watched.timedOut = true
                    let said = String(decoding: watched.result.bytes, as: UTF8.self)
                    if !said.contains(HostReport.linePrefix), !said.contains(FaultRecord.marker) {
                        // Too wedged to report: see where its threads are before stopping it.
                        watched.deadlineHeartbeat = heartbeat?.read()
                        watched.deadlineAt = now
                        watched.deadlineDump = Self.ptraceDump(pid: child.pid)
                    }
                    child.signalGroup(SIGTERM)
                    killAt = now + UInt64(gracePeriod * 1e9)
                } else if let at = killAt, now >= at {
                    child.signalGroup(SIGKILL)
                    killAt = nil
                }
                if now >= nextSample {
                    if let status = ProcessStatus.read(statusPath) {
                        let threads = status.threads ?? 0
                        watched.peakThreads = max(watched.peakThreads, threads)
                        watched.peakRSSBytes = max(watched.peakRSSBytes, status.peakRSSBytes ?? 0)
                        if threads > 0, watched.timeline.last?.threads != threads {
                            watched.timeline.append(ThreadSample(seconds: Double(now - start) / 1e9, threads: threads))
                        }
                    }
                    nextSample = now + UInt64(samplingInterval * 1e9)
                }
                var status: Int32 = 0
                // A stop left over from a ptrace walk is not an exit (stopped: low byte 0x7f).
                if wait4(child.pid, &status, WNOHANG, &watched.usage) == child.pid, status & 0xff != 0x7f {
                    watched.status = status
                    reaped = true
                    // Whatever the child started dies with it.
                    child.signalGroup(SIGKILL)
                }
            }
            if open.isEmpty {
                if !reaped { usleep(500) }
                continue
            }
            var descriptors = open.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            // After the child is reaped, drain what is buffered without waiting on grandchildren.
            let timeout: Int32 = reaped ? 0 : Int32(max(1, min(samplingInterval * 1000, Double(deadline > now ? deadline - now : 0) / 1e6)))
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready <= 0 {
                if reaped { open.keys.forEach { close($0) }; open.removeAll() }
                continue
            }
            for descriptor in descriptors where descriptor.revents != 0 {
                let count = read(descriptor.fd, &chunk, chunk.count)
                if count > 0 {
                    if let path = open[descriptor.fd] { watched[keyPath: path].append(chunk[0..<count]) }
                    if descriptor.fd == child.resultDescriptor {
                        watched.lastResultRead = strain_monotonic_ns()
                        if !watched.remoteUnwindDone, !reaped, let tids = Self.remoteUnwindRequest(in: watched.result.bytes) {
                            // The child dumped what it could and waits, blocked threads and all: walk the rest from here.
                            watched.remoteUnwindDone = true
                            let giveUp = strain_monotonic_ns() + UInt64(RemoteUnwinder.budgetSeconds * 1e9)
                            for tid in tids where strain_monotonic_ns() < giveUp {
                                if let stack = RemoteUnwinder.stack(pid: child.pid, tid: tid) { watched.remoteStacks[tid] = stack }
                            }
                            child.signalGroup(SIGKILL)
                        }
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

    /// Every thread of a live child, walked from here with ptrace.
    static func ptraceDump(pid: Int32) -> RawDump {
        let started = strain_monotonic_ns()
        var threads: [RawThread] = []
        let giveUp = started + UInt64(RemoteUnwinder.budgetSeconds * 1e9)
        for tid in ThreadState.tids(pid: String(pid)) {
            let state = ThreadState.read(pid: String(pid), tid: tid)
            let stack = strain_monotonic_ns() < giveUp ? RemoteUnwinder.stack(pid: pid, tid: tid) : nil
            threads.append(RawThread(tid: tid, name: state?.name ?? "?", state: state?.state ?? stack?.state ?? "?",
                                     wait: state?.wait, inWork: false, frames: stack?.frames ?? [], viaPtrace: stack != nil))
        }
        return RawDump(method: "ptrace", threads: threads, maps: Watchdog.contents(of: "/proc/\(pid)/maps"),
                       unanswered: [], dumpNanoseconds: Int(strain_monotonic_ns() - started), waitCycle: nil)
    }

    /// The tids of a complete `REMOTE-UNWIND` line after the report, if the child wrote one.
    static func remoteUnwindRequest(in bytes: [UInt8]) -> [Int]? {
        let prefix = Array(HostReport.remoteUnwindPrefix.utf8)
        guard bytes.count > prefix.count, bytes.last == UInt8(ascii: "\n") else { return nil }
        let lineStart = bytes.dropLast().lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let line = bytes[lineStart..<(bytes.count - 1)]
        guard line.starts(with: prefix) else { return nil }
        return String(decoding: line.dropFirst(prefix.count), as: UTF8.self).split(separator: " ").compactMap { Int($0) }
    }

    private func record(_ spec: TrialSpec, _ watched: Watched, trialSeconds: Double, startedAt: String) -> TrialRecord {
        let resultText = String(decoding: watched.result.bytes, as: UTF8.self)
        var metrics = TrialMetrics()
        var outcome: TrialOutcome
        var trace: FaultTrace?
        var dump: ThreadDump?
        var stall: StallReport?
        var confinement: [ConfinementViolation]?

        let exitedNormally = (watched.status & 0x7f) == 0
        let exitStatus = (watched.status >> 8) & 0xff
        let killedBy: Int32? = exitedNormally ? nil : watched.status & 0x7f

        if let fault = FaultRecord(parsing: resultText[...]) {
            let built = traceBuilder.trace(from: fault)
            trace = built
            outcome = TrialOutcome(kind: fault.isOverflow ? .stackOverflow : .crashed, signal: fault.signal,
                                   message: fault.isComplete ? nil : "the fault record was cut short")
            metrics.stackSizeBytes = built.stackSizeBytes
            metrics.stackHighWaterBytes = fault.isOverflow ? built.stackSizeBytes : nil
            metrics.depth = built.markedDepth
            metrics.frames = fault.totalFrames
        } else if let report = Self.hostReport(in: resultText) {
            outcome = report.outcome
            metrics = report.metrics
            if var raw = report.dump {
                for index in raw.threads.indices {
                    guard let stack = watched.remoteStacks[raw.threads[index].tid] else { continue }
                    raw.threads[index].frames = stack.frames
                    raw.threads[index].viaPtrace = true
                }
                dump = dumpBuilder.dump(from: raw)
            }
            stall = report.stall
            if let raw = report.confinementViolations {
                confinement = raw.map { ConfinementVerdict.named($0, maps: report.maps ?? "", symbolizer: symbolizer) }
            }
            if let last = report.lastHeartbeatNanoseconds, watched.lastResultRead > last {
                stall?.recordedAfterSeconds = Double(watched.lastResultRead - last) / 1e9
            }
        } else if watched.timedOut {
            outcome = TrialOutcome(kind: .timedOut, message: "no result within \(spec.timeoutSeconds)s; the child was stopped")
            if let raw = watched.deadlineDump, raw.threads.contains(where: { !$0.frames.isEmpty }) {
                dump = dumpBuilder.dump(from: raw)
                let stuck = raw.threads.filter { $0.name != Watchdog.threadName }
                let allWaiting = !stuck.isEmpty && stuck.allSatisfy { ThreadState.isUntimedWait($0.wait) }
                let prefix = "no result within \(spec.timeoutSeconds)s"
                if let beat = watched.deadlineHeartbeat, beat.queued - beat.finished > 0,
                   Double(watched.deadlineAt &- beat.last_event_ns) / 1e9 >= spec.stallSeconds {
                    // The heartbeat says work was pending and stood still: what the watchdog would have said.
                    let silent = String(format: "%.2fs", Double(watched.deadlineAt &- beat.last_event_ns) / 1e9)
                    if beat.queued - beat.started > 0 {
                        outcome = TrialOutcome(kind: .starved, message: "\(prefix) and no progress for \(silent): \(beat.queued - beat.started) of \(beat.queued) units wait for a thread (read from the shared heartbeat; the child's watchdog did not report, so its threads were unwound through ptrace)")
                    } else if allWaiting {
                        outcome = TrialOutcome(kind: .deadlocked, message: "\(prefix) and no progress for \(silent); every thread waits with no timeout (the child's watchdog did not report, so its threads were unwound through ptrace)")
                    } else {
                        outcome.message! += "; its threads, unwound through ptrace, are in the record"
                    }
                } else if allWaiting {
                    // Every thread waiting with no timeout (the watchdog's sleep aside) can never go on.
                    outcome = TrialOutcome(kind: .deadlocked, message: "\(prefix) and every thread (\(stuck.count)) waits with no timeout; the child reported no pending work, so its threads were unwound through ptrace")
                } else {
                    outcome.message! += "; its threads, unwound through ptrace, are in the record"
                }
            }
        } else if let signal = killedBy {
            outcome = TrialOutcome(kind: .crashed, signal: signal,
                                   message: "the child died of \(SignalName.of(signal)) without a fault record (a thread without an alternate signal stack, or a signal from outside)")
        } else {
            let tail = String(decoding: watched.error.bytes.suffix(400), as: UTF8.self)
            outcome = TrialOutcome(kind: .harnessError, message: "the child exited with status \(exitStatus) without a result\(tail.isEmpty ? "" : ": \(tail)")")
        }

        // What only the parent can see: the whole child's resource use, and the thread count it sampled.
        let usage = ResourceUsage(watched.usage)
        if metrics.userSeconds == nil { metrics.userSeconds = usage.userSeconds }
        if metrics.systemSeconds == nil { metrics.systemSeconds = usage.systemSeconds }
        // getrusage's ru_maxrss is inherited from the parent across posix_spawn's exec: use VmHWM.
        if metrics.peakRSSBytes == nil, watched.peakRSSBytes > 0 { metrics.peakRSSBytes = watched.peakRSSBytes }
        if metrics.voluntaryContextSwitches == nil { metrics.voluntaryContextSwitches = usage.voluntaryContextSwitches }
        if metrics.involuntaryContextSwitches == nil { metrics.involuntaryContextSwitches = usage.involuntaryContextSwitches }
        metrics.peakThreads = max(metrics.peakThreads ?? 0, watched.peakThreads)
        metrics.trialSeconds = trialSeconds

        var record = TrialRecord(graded: spec, outcome: outcome, metrics: metrics, trace: trace,
                                 stdout: watched.output.text, stderr: watched.error.text, startedAt: startedAt)
        record.dump = dump
        record.stall = stall
        record.confinementViolations = confinement
        record.threadTimeline = watched.timeline.isEmpty ? nil : Self.thinned(watched.timeline, to: timelineCap)
        return record
    }

    /// At most `cap` points, keeping the first, the last and each stretch's highest count.
    static func thinned(_ samples: [ThreadSample], to cap: Int) -> [ThreadSample] {
        guard samples.count > cap, cap >= 2 else { return samples }
        let stride = Double(samples.count - 2) / Double(cap - 2)
        var result = [samples[0]]
        var index = 1.0
        while Int(index) < samples.count - 1 && result.count < cap - 1 {
            let end = min(samples.count - 1, Int(index + stride))
            let stretch = samples[Int(index)..<max(Int(index) + 1, end)]
            result.append(stretch.max { $0.threads < $1.threads }!)
            index += stride
        }
        result.append(samples[samples.count - 1])
        return result
    }

    static func hostReport(in text: String) -> HostReport? {
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix(HostReport.linePrefix) }) else { return nil }
        guard let report = try? JSONDecoder().decode(HostReport.self, from: Data(line.dropFirst(HostReport.linePrefix.count).utf8)),
              report.version == HostReport.currentVersion else { return nil }
        return report
    }
}

/// Keeps the first `cap` bytes of a stream and counts the rest.
struct BoundedBuffer {
    let cap: Int
    private(set) var bytes: [UInt8] = []
    private(set) var dropped = 0

    init(cap: Int) { self.cap = cap }

    mutating func append(_ chunk: ArraySlice<UInt8>) {
        let room = max(0, cap - bytes.count)
        bytes.append(contentsOf: chunk.prefix(room))
        dropped += max(0, chunk.count - room)
    }

    /// The kept text, with a note of what was dropped; nil when there was none.
    var text: String? {
        guard !bytes.isEmpty || dropped > 0 else { return nil }
        let kept = String(decoding: bytes, as: UTF8.self)
        return dropped > 0 ? kept + "\n[… \(dropped) more bytes not kept]" : kept
    }
}

/// The 4 KiB memfd that holds a child's heartbeat, mapped in the parent too.
final class SharedHeartbeat {
    /// The variable that tells the child which fd holds the block.
    static let environmentKey = "STRAIN_HEARTBEAT_FD"
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
