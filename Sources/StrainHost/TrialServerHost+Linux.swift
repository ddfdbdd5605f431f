internal import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainKit
import StrainWire

/// The trial server's side: a process of the same binary that has loaded the
/// Swift runtime, Foundation and the scenario catalog once, stays single-threaded,
/// and copies itself into one trial per request.
///
/// Each copy is a process of its own with its own address space, started with
/// CLONE_PARENT so that its parent is the runner (see `strain_server_fork_trial`):
/// the runner reaps it, reads its resource use, ptraces it and is the thread its
/// parent-death signal is tied to, exactly as for a spawned trial. The copy then
/// runs `TrialHost.run`, which applies the profile (default pthread stack size,
/// `RLIMIT_STACK`, checked by the kernel when the main stack grows) before any
/// thread starts.
///
/// - Important: nothing here may start a thread (no GCD, no `Task`, no Foundation
///   API that starts one) or lock a Swift `Mutex` on this thread: a copy has only
///   this thread, and would inherit a lock held elsewhere. (The thread ids the runtime,
///   `Mutex` and libdispatch cache in TLS the copy renews: `strain_server_renew_tid_caches`.)
package enum TrialServerHost {
    /// The fd of the server's socket to its runner.
    static let socketDescriptor = ChildEnvironment.trialServerSocketDescriptor
    /// `STRAIN_TRIAL_SERVER=refuse` makes the server refuse to start: the runner then spawns every trial.
    static let refuseVariable = ChildEnvironment.trialServerRefuse
    /// Set beside `LD_BIND_NOW=1` when the runner added it for the server, so its copies drop both.
    static let bindNowVariable = ChildEnvironment.trialServerBindNow

    package static func serve(catalog: ScenarioCatalog) -> Never {
        start()
        // The loop keeps a small frame: a copy's main thread runs its trial from
        // here, and every byte of this frame is stack its trial does not get (the
        // work is done in helpers that have returned by the time of the copy).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: TrialServerRequest.maximumBytes, alignment: 16)
        while true {
            guard let pending = nextRequest(buffer) else { continue }
            let pid = strain_server_fork_trial()
            if pid == 0 {
                // The request was decoded: its 1 MiB buffer is not the trial's to
                // carry (under a `memory-limit:` it would be room a spawned trial has).
                buffer.deallocate()
                becomeTrial(pending, catalog: catalog)
            }
            started(pid, pending)
        }
    }

    /// A request that passed every check: what the copy needs.
    private struct Pending {
        var shared: Bool
        var spec: Result<TrialSpec, any Error>
        var descriptors: [Int32]
    }

    /// Binds the server to its runner, checks it can copy itself, warms it up and says it is ready.
    @inline(never)
    private static func start() {
        // Never outlive the runner: its death kills this process group (the server alone).
        let parent = getenv(ChildEnvironment.parentPID).flatMap { Int32(String(cString: $0)) } ?? 0
        var bindStatus = strain_child_bind_to_parent(parent)
        // The counted server runs under Valgrind, which refuses the parent-death signal:
        // a watcher process stands in, and removes the counted trials' folder if the
        // runner dies before it could.
        if InstructionCounter.excusesParentDeathFailure(bindStatus) {
            bindStatus = strain_server_watch_runner(parent, getenv(ChildEnvironment.countedServerFolder))
        }
        let prepareStatus = strain_server_prepare()
        let threads = Int(strain_thread_count())
        // How the tests exercise the runner's fall back to spawning.
        if getenv(refuseVariable).map({ String(cString: $0) }) == "refuse" {
            reply(.refused(errno: 0, message: "the trial server refused to start (\(refuseVariable)=refuse)"))
            _exit(3)
        }
        if bindStatus != 0 || prepareStatus != 0 || threads != 1 {
            reply(.refused(errno: prepareStatus != 0 ? prepareStatus : bindStatus,
                           message: "the trial server cannot copy itself (parent-death signal errno \(bindStatus), thread id errno \(prepareStatus), \(threads) threads running)"))
            _exit(3)
        }
        // What every copy's probe would otherwise do first: the main thread's
        // alternate stack and bounds (glibc reads /proc/self/maps for them, about
        // 0.1 ms; a copy whose profile changes RLIMIT_STACK asks again), and the
        // alternate stacks of a copy's preparation and watchdog threads (a copy under
        // a `memory-limit:` unmaps them first, so the limit finds what a spawned trial has).
        _ = strain_thread_prepare()
        // The fault handler's fast walk on the main thread (libunwind's cache for it), and
        // its buffer; libunwind started first, so every copy can renew its pipe.
        _ = strain_probe_start_unwinder()
        _ = strain_thread_warm_fast_walk()
        _ = strain_probe_reserve_fast_walk(0)
        strain_thread_prefill_alternate_stacks(2)
        warmUp()
        _ = strain_server_note_signals()
        reply(.ready(version: TrialServerRequest.currentVersion, pid: getpid()))
    }

    /// Waits for the next request; nil after refusing one. Exits when the runner has closed its end.
    @inline(never)
    private static func nextRequest(_ buffer: UnsafeMutableRawBufferPointer) -> Pending? {
        var descriptors = [Int32](repeating: -1, count: 4)
        var count = descriptors.count
        let length = strain_server_receive(socketDescriptor, buffer.baseAddress, buffer.count, &descriptors, &count)
        // The runner closed its end (it is done, or gone): so is the server.
        if length == 0 { _exit(0) }
        if length < 0 {
            guard length == -Int(EMSGSIZE) else { _exit(3) }
            reply(.refused(errno: EMSGSIZE, message: "the request was larger than \(TrialServerRequest.maximumBytes) bytes or carried more than 4 descriptors"))
            return nil
        }
        let received = Array(descriptors[0..<count])
        func refuse(_ error: Int32, _ message: String) -> Pending? {
            received.forEach { _ = close($0) }
            reply(.refused(errno: error, message: message))
            return nil
        }
        guard let request = try? JSONDecoder().decode(TrialServerRequest.self, from: Data(buffer[0..<length])),
              request.version == TrialServerRequest.currentVersion else {
            return refuse(EPROTO, "the request is not a version \(TrialServerRequest.currentVersion) trial server request")
        }
        guard received.count == (request.shared ? 4 : 3) else {
            return refuse(EPROTO, "the request came with \(received.count) descriptors, not \(request.shared ? 4 : 3)")
        }
        // A copy of a process with other threads could inherit their locks held.
        let running = Int(strain_thread_count())
        guard running == 1 else {
            return refuse(EDEADLK, "the trial server has \(running) threads; it copies itself only while it has one")
        }
        // Decoded here, once: the copy starts with its spec in hand, and the
        // decoder's first-use work is done in the server for every later copy.
        let spec = Result { try JSONDecoder().decode(TrialSpec.self, from: Data(request.spec.utf8)) }
        return Pending(shared: request.shared, spec: spec, descriptors: received)
    }

    /// The server's side after a copy: its descriptors closed, the runner told.
    @inline(never)
    private static func started(_ pid: pid_t, _ pending: Pending) {
        pending.descriptors.forEach { _ = close($0) }
        if pid < 0 {
            reply(.refused(errno: -Int32(pid), message: "could not copy the trial server: \(String(cString: strerror(-Int32(pid))))"))
        } else {
            reply(.started(pid: pid))
        }
    }

    /// The copy's first steps: the trial's descriptors in place, then the trial.
    @inline(never)
    private static func becomeTrial(_ pending: Pending, catalog: ScenarioCatalog) -> Never {
        let descriptors = pending.descriptors
        let status = strain_server_child_setup(descriptors[0], descriptors[1], descriptors[2], pending.shared ? descriptors[3] : -1)
        // Without its descriptors the copy cannot report: its exit without a report is the runner's harnessError.
        if status != 0 { _exit(126) }
        // `strain _trial` in /proc/PID/cmdline and ps, as a spawned trial: the
        // argument's bytes are rewritten in place ("_trial-server" is longer).
        if CommandLine.argc > 1, let argument = CommandLine.unsafeArgv[1] {
            let length = strlen(argument)
            memset(argument, 0, length)
            _ = "_trial".withCString { strncpy(argument, $0, length) }
        }
        if pending.shared {
            setenv(ChildEnvironment.heartbeatDescriptor, String(ChildEnvironment.sharedDescriptor), 1)
        } else {
            unsetenv(ChildEnvironment.heartbeatDescriptor)
        }
        // The server's symbols were bound at its start; programs a trial starts bind as usual.
        if getenv(bindNowVariable) != nil {
            unsetenv("LD_BIND_NOW")
            unsetenv(bindNowVariable)
        }
        TrialHost.run(decoded: pending.spec, catalog: catalog)
    }

    /// What every copy would otherwise do for the first time itself: the Swift
    /// runtime's first conformance lookups and metadata for the report's types.
    /// Nothing here starts a thread or takes a Swift `Mutex`.
    ///
    /// A profile of the copies showed half of a `noop` copy's CPU time in such
    /// first uses: instantiating generic metadata (a `Result` over `any Error`
    /// checks `Error` conformances by scanning every conformance record) and
    /// encoding a report's thread list and numbers. Done here once, every copy
    /// inherits the runtime's caches.
    private static func warmUp() {
        let metrics = TrialMetrics(
            wallSeconds: 0.001, userSeconds: 0.001, systemSeconds: 0.001, peakRSSBytes: 1 << 20,
            voluntaryContextSwitches: 1, involuntaryContextSwitches: 1, peakThreads: 2,
            stackSizeBytes: 1 << 20, stackHighWaterBytes: 4096, depth: 1, custom: ["warm-up": 1.5]
        )
        var report = HostReport(outcome: TrialOutcome(kind: .completed, message: "warm-up"), metrics: metrics,
                                threads: [ThreadReport(tid: 1, stackSizeBytes: 1 << 20, stackHighWaterBytes: 4096)], threadsAtStart: 1)
        // The allocation sites every trial reports: merged, their mapping described, encoded.
        // Not done here, their generic metadata (the merge's dictionary, the sites' coding keys,
        // joining the mapping lines) was instantiated by every copy: about 0.3 ms of a noop copy
        // in a CPU profile of 300 trials (perf record), conformance scans most of it.
        let address = UInt(bitPattern: #dsohandle) + 64
        report.allocationSites = AllocationCounter.merged([strain_alloc_site_count(address: address, allocations: 1, bytes: 16),
                                                           strain_alloc_site_count(address: address, allocations: 1, bytes: 16)])
        report.maps = AllocationCounter.mappings(of: report.allocationSites ?? [])
        if let bytes = try? JSONEncoder().encode(report) { _ = try? JSONDecoder().decode(HostReport.self, from: bytes) }
        // What a copy asks of its strategy before the work (the profile's stack, the fast walk's buffer).
        for strategy in ["main", "thread(512KiB)", "gcd-global"] { _ = (try? StrategySpec(parsing: strategy))?.chosenStackBytes }
        // The metadata of the generic types a copy's trial path uses (asking for a
        // type's metadata instantiates it; none of this runs or locks anything).
        let types: [Any.Type] = [
            Result<TrialSpec, any Error>.self, Result<Workload, any Error>.self, Result<Void, any Error>.self, ResultHandoff<Workload>.self,
            [ThreadReport].self, [String: Double].self, RawDump?.self, Pending.self,
        ]
        keep(types)
    }

    /// Keeps the warm-up's metadata requests from being optimised away: the
    /// identity of each type is used. The server is single-threaded, so the
    /// unsynchronised static is only ever touched by its one thread.
    @inline(never)
    private static func keep(_ types: [Any.Type]) {
        warmedTypes = types.reduce(0) { $0 ^ ObjectIdentifier($1).hashValue }
    }

    nonisolated(unsafe) private static var warmedTypes = 0

    private static func reply(_ reply: TrialServerReply) {
        guard let bytes = try? JSONEncoder().encode(reply) else { return }
        _ = bytes.withUnsafeBytes { strain_server_send(socketDescriptor, $0.baseAddress, $0.count, nil, 0) }
    }
}
