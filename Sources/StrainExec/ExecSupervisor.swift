internal import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainRunner
import StrainKit
import StrainSymbols
import StrainWire

/// What `strain exec` was asked to run.
package struct ExecRequest: Sendable {
    package var program: String
    package var arguments: [String]
    /// The run folder: run.json, the dumps, and the probe's own files in `probe/`.
    package var folder: String
    /// Seconds without CPU progress after which a stuck pool is dumped, once (nil: no watchdog).
    package var stallSeconds: Double?
    package var profile: Profile
    /// Whether the probe follows the program's execs and children (a wrapper's `exec`,
    /// a shim, a script's commands), so each of them is probed too; off, only the
    /// program's first image is.
    package var follow: Bool

    package init(program: String, arguments: [String], folder: String, stallSeconds: Double? = nil, profile: Profile = .linux, follow: Bool = true) {
        self.program = program
        self.arguments = arguments
        self.folder = folder
        self.stallSeconds = stallSeconds
        self.profile = profile
        self.follow = follow
    }

    /// The probe's folder inside the run folder, as an absolute path: the program (or a
    /// wrapper's `cd`) may change its directory, and the probe and a sanitizer write where
    /// they are told (a relative `--out`, the default's too, sent AddressSanitizer's report
    /// to a folder that did not exist, and the program spun: re-trial 33n, F1).
    package var probeFolder: String { URL(fileURLWithPath: (folder as NSString).appendingPathComponent("probe")).standardizedFileURL.path }
}

/// A thread dump the program wrote while it ran (SIGQUIT, `strain dump`, the watchdog).
package struct ExecDump: Sendable {
    /// 1 for the first dump of the run.
    package var number: Int
    package var dump: ThreadDump
    /// The watchdog's verdict, when the watchdog asked for this dump.
    package var stall: ExecStallVerdict?
}

/// How `strain exec` ended: the program's status and the run's record.
package struct ExecResult: Sendable {
    package var pid: Int32
    package var termination: TerminationStatus
    package var record: RunRecord
    package var dumps: [ExecDump]
    /// What Strain could not see or judge in this program, each said once on the terminal
    /// and kept in the record's `leftOut`: a static program without the probe, a JVM's
    /// monitor waits without jcmd.
    package var notes: [String] = []
}

/// Runs one program under the preloaded probe and records it as a one-trial run
/// (scenario `exec`), through the trial pipeline a suite's trials go through
/// (`TrialPipeline.swift`): launched by `ProcessSpawn`, watched into a `Watched`
/// (/proc sampled as a trial's is), classified by the same `OutcomeClassifier` (its
/// exit status is the outcome, a fault record a symbolized trace; dumps are
/// symbolized and grouped as they arrive), recorded by `TrialRecordBuilder`.
///
/// The program owns the terminal: strain reads none of its output, passes on the
/// signals it is sent, and waits.
package struct ExecSupervisor: Sendable {
    package var probeLibrary: String
    /// Classifies the program's fault records and names its dumps, as a trial's.
    let classifier: OutcomeClassifier
    /// How often the supervisor looks for dumps and samples the program, while it waits for its end.
    package var pollMilliseconds: Int32 = 50

    /// Frames of libdispatch's event manager thread (Linux: epoll), which runs under a worker's frames.
    static let dispatchManagerFrames = ["_dispatch_mgr_thread", "_dispatch_mgr_invoke", "_dispatch_event_loop_drain"]
    /// The frame every libdispatch worker starts in (Swift concurrency's cooperative threads too).
    static let dispatchWorkerFrame = "_dispatch_worker_thread"
    /// Frames of Swift concurrency's jobs (the pool frames that are not libdispatch's).
    static let jobFrames = ["swift_job_run", "runJobInEstablishedExecutorContext", "swift::runJob"]
    /// Frames of the pools the watchdog watches: libdispatch's workers and Swift concurrency's jobs.
    static let poolFrames = [dispatchWorkerFrame, "_dispatch_root_queue_drain", "_dispatch_lane"] + jobFrames

    package init(probeLibrary: String, symbolizer: Symbolizer = Symbolizer()) {
        self.probeLibrary = probeLibrary
        classifier = OutcomeClassifier(traceBuilder: TraceBuilder(symbolizer: symbolizer), dumpBuilder: ThreadDumpBuilder(symbolizer: symbolizer),
                                       symbolizer: symbolizer)
    }

    /// The environment the program starts with: the caller's, the probe first in
    /// LD_PRELOAD, and the probe's settings (which the probe removes again at start).
    package func environment(for request: ExecRequest, base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        // A program linked with a shared sanitizer runtime gets it preloaded ahead of the
        // probe: the sanitizer's malloc and interceptors then come first, as in the
        // program alone (the probe's counting malloc would hide every allocation from
        // AddressSanitizer and ThreadSanitizer), and the probe's pthread_create and
        // sigaction still run behind them.
        let preload = (Self.sanitizerRuntimes(of: request.program, path: base["PATH"]) + [probeLibrary]).joined(separator: ":")
        if let existing = base["LD_PRELOAD"], !existing.isEmpty {
            environment["LD_PRELOAD"] = preload + ":" + existing
        } else {
            environment["LD_PRELOAD"] = preload
        }
        environment[ProbeEnvironment.library] = probeLibrary
        environment[ProbeEnvironment.folder] = request.probeFolder
        environment[ProbeEnvironment.parent] = String(getpid())
        if request.follow { environment[ProbeEnvironment.follow] = "1" }
        environment[ProbeEnvironment.handlerImages] = OutsideWake.runtimeDefaults.flatMap(\.images).joined(separator: ":")
        if let bytes = request.profile.threadStackBytes { environment[ProbeEnvironment.threadStack] = String(bytes) }
        if let bytes = request.profile.mainStackBytes { environment[ProbeEnvironment.mainStack] = String(bytes) }
        // A program built with ThreadSanitizer or AddressSanitizer writes its reports where
        // Strain reads them; a program built without one ignores the variables.
        return SanitizerLog.environment(environment, folder: request.probeFolder)
    }

    /// `environment` as `KEY=VALUE` lines in the order strain's own environment has its
    /// variables (`/proc/self/environ`, its first MiB), the ones Strain adds after them
    /// (a dictionary's order put `B=2` before `A=1`: re-trial 33n, F2).
    static func ordered(_ environment: [String: String]) -> [String] {
        let handle = FileHandle(forReadingAtPath: "/proc/self/environ")
        defer { try? handle?.close() }
        let own = String(decoding: handle?.readData(ofLength: 1 << 20) ?? Data(), as: UTF8.self)
        var lines: [String] = [], placed = Set<String>()
        for entry in own.split(separator: "\0") {
            let key = String(entry.prefix { $0 != "=" })
            guard let value = environment[key], placed.insert(key).inserted else { continue }
            lines.append(key + "=" + value)
        }
        return lines + environment.keys.filter { !placed.contains($0) }.sorted().map { $0 + "=" + environment[$0]! }
    }

    /// Runs the program to its end. `onStart` hears its pid; `onDump` each dump as it is read;
    /// `onStopped` why strain is waiting, each time the program stops (`SIGSTOP`, a
    /// tracer) and so can neither end nor be judged until something continues it;
    /// `onNote` what Strain cannot see or judge in this program, once each, as soon as it
    /// is known (a static program at its start): the record keeps them in `leftOut`.
    package func run(_ request: ExecRequest, onStart: (Int32) -> Void = { _ in }, onDump: (ExecDump) -> Void = { _ in },
                     onStopped: (String) -> Void = { _ in }, onNote: (String) -> Void = { _ in }) throws(ExecError) -> ExecResult {
        if let code = OutputDirectory.makeFolders(request.probeFolder) {
            throw ExecError(.setup, "cannot create \(request.probeFolder) (\(String(cString: strerror(code)))); give an --out folder you can write to")
        }
        let startedAt = Date().formatted(.iso8601)
        var environment = EnvironmentProbe.current()
        // The program's allocator, not strain's: a sanitizer's runtime, preloaded ahead of the probe, owns its heap (re-trial 33l, F3).
        if !Self.sanitizerRuntimes(of: request.program, path: ProcessInfo.processInfo.environment["PATH"]).isEmpty { environment.allocator = "sanitizer" }
        // Nor glibc's when the program brings its own: linked in statically, or a `malloc` its executable
        // defines, which every library's calls reach first (both were recorded as libc.so.6: re-trial 33m, F3).
        let programFile = Self.resolved(request.program, path: ProcessInfo.processInfo.environment["PATH"])
        let isStatic = ELFNeededLibraries.isStatic(path: programFile) == true
        if isStatic {
            environment.allocator = "the program's own (statically linked)"
        } else if ELFNeededLibraries.definesSymbol("malloc", path: programFile) == true {
            environment.allocator = "the program's own (\((programFile as NSString).lastPathComponent) defines malloc)"
        }
        let started = strain_monotonic_ns()
        // Before any signal can be passed on: the witness that tells a signal sent to
        // strain's whole process group (the program has it already) from one sent to strain.
        _ = strain_exec_start_witness()
        defer { strain_exec_stop_witness() }
        _ = strain_exec_forward_signals(0)
        // Started with SIGCHLD ignored, strain would see the kernel reap the program
        // and never learn its status: the default for strain, the ignore given back
        // to the program by the probe before its main.
        var programEnvironment = self.environment(for: request)
        if strain_child_signal_take_back() == 1 { programEnvironment[ProbeEnvironment.childSignal] = "ignore" }
        var notes: [String] = []
        func note(_ text: String) {
            guard !notes.contains(text) else { return }
            notes.append(text)
            onNote(text)
        }
        if isStatic { note(Self.staticProgram) }
        let isGo = ELFNeededLibraries.hasSection(".go.buildinfo", path: programFile) == true
        // The folder as made, before the program can touch it.
        let probe = ProbeFolder(path: request.probeFolder)
        let program = try ProgramProcess.spawn(program: request.program, arguments: request.arguments,
                                               environment: Self.ordered(programEnvironment))
        _ = strain_exec_forward_signals(program.pid)
        onStart(program.pid)
        // strain's own address space's high-water mark now (VmHWM): posix_spawn's child
        // starts on strain's memory, and its exec keeps that mark in the child's ru_maxrss
        // (see `peakRSS(sampled:usage:runnerPeakAtSpawn:)`). Not strain's own ru_maxrss:
        // that holds the mark strain inherited the same way from whatever started it (a
        // test process of hundreds of MiB), and hid the program's figure under it.
        let ownPeakAtSpawn = ProcessStatus.read("/proc/self/status")?.peakRSSBytes ?? Int.max

        var watched = Watched()
        var dumps: [ExecDump] = []
        var readDumps = Set<String>()
        var watch = request.stallSeconds.map { StallWatch(pid: program.pid, thresholdSeconds: $0) }
        var stall: ExecStall?
        // The last wait on an outside event the watch saw (not a stall: the watch goes on),
        // and how many signals strain had passed on when a stall was called.
        var outsideWait: ExecStall?
        var signalsAtStall: UInt = 0
        // The program's CPU time (its own and its reaped children's) when a stall was called, and when.
        var cpuAtStall: Double?
        var stallCalledAt: UInt64 = 0
        var peakWorkers = 0
        var nextWorkerCount: UInt64 = 0
        let statusPath = "/proc/\(program.pid)/status"
        var ended: (TerminationStatus, rusage)?
        // The program can write dumps of its own into the probe folder: they are read to
        // ProbeFolder's caps, in count and in time, and what was not read is said in the record.
        var cuts = ProbeFolder.Cuts()
        var dumpReadNanoseconds: UInt64 = 0
        func collectDumps(_ stallVerdict: ExecStallVerdict?, taken: RawDump?) -> ExecDump? {
            var newest: ExecDump?
            func keep(_ raw: RawDump) {
                let dump = ExecDump(number: dumps.count + 1, dump: classifier.dumpBuilder.dump(from: raw), stall: stallVerdict)
                dumps.append(dump)
                onDump(dump)
                newest = dump
            }
            // A dump the watch took itself, with ptrace: the verdict's.
            if let taken { keep(taken) }
            let fresh = probe.dumpFiles(pid: program.pid).filter { !readDumps.contains($0) }
            for path in fresh {
                readDumps.insert(path)
                // The newest dump when a stall was called is read whatever the caps: its verdict's.
                let stallsOwn = stallVerdict != nil && taken == nil && path == fresh.last
                if !stallsOwn && dumps.count >= ProbeFolder.dumpsReadLimit { cuts.dumpsOverCount += 1; continue }
                if !stallsOwn && Double(dumpReadNanoseconds) / 1e9 >= ProbeFolder.dumpReadSeconds { cuts.dumpsOverTime += 1; continue }
                let readStart = strain_monotonic_ns()
                defer { dumpReadNanoseconds &+= strain_monotonic_ns() &- readStart }
                guard let raw = ProbeFolder.readDump(path, cuts: &cuts) else { continue }
                keep(raw)
            }
            return newest
        }
        var saidStopped = false
        while ended == nil {
            ended = program.waitForEnd(milliseconds: pollMilliseconds)
            if ended != nil { break }
            let now = strain_monotonic_ns()
            watched.sample(statusPath, now: now, start: started)
            // Said once per stop: a stopped program neither ends nor uses CPU, so strain waits.
            if let stopped = Self.stoppedState(pid: program.pid) {
                if !saidStopped { onStopped(stopped) }
                saidStopped = true
            } else {
                saidStopped = false
            }
            // Past the smallest GCD cap, count the pool's workers (their names), four times a second.
            if let threads = watched.timeline.last?.threads, threads > Self.smallestGCDCap, now >= nextWorkerCount {
                peakWorkers = max(peakWorkers, Self.dispatchWorkers(pid: program.pid))
                nextWorkerCount = now &+ 250_000_000
            }
            _ = collectDumps(nil, taken: nil)
            if stall == nil, var current = watch {
                let suspicion = current.step(now: strain_monotonic_ns())
                watch = current
                if let suspicion {
                    // Signals counted from before the dump: a Ctrl-C during it ended the program,
                    // which did not run on by itself (re-trial 33h: "withdrawn").
                    let signalsBeforeDump = strain_exec_signals_seen()
                    var found: [String] = []
                    let judged = judgeStall(suspicion, watch: &current, probe: probe, pid: program.pid, notes: &found, collect: collectDumps)
                    for text in found { note(text) }
                    if let judged, judged.verdict.kind == nil {
                        // Something outside can end the wait: watched on, judged again once it moves.
                        outsideWait = judged
                        current.restart(now: strain_monotonic_ns(), threads: suspicion.threads)
                    } else if judged != nil {
                        stall = judged
                        signalsAtStall = signalsBeforeDump
                        cpuAtStall = Self.cpuSeconds(pid: judged?.pid ?? program.pid)
                        stallCalledAt = strain_monotonic_ns()
                    }
                    watch = stall == nil ? current : nil
                }
            }
        }
        _ = collectDumps(nil, taken: nil)
        let end = strain_monotonic_ns()
        let (termination, usage) = ended!
        watched.termination = termination
        watched.usage = usage
        watched.peakRSSBytes = Self.peakRSS(sampled: watched.peakRSSBytes, usage: usage, runnerPeakAtSpawn: ownPeakAtSpawn)
        watched.closeTimeline(end: end, start: started)
        let wall = Double(end - started) / 1e9

        let sanitizerRead = SanitizerLog.reports(in: request.probeFolder, symbolizer: classifier.symbolizer)
        let sanitizerReports = sanitizerRead.reports
        // The program ran on by itself after a stall was called when it then exited by its own
        // status with no signal passed on to it by strain (a terminal's included).
        // So did one that used CPU time after it (a wait woken from outside, then stopped
        // by a signal), or faulted in its own code after it (a deadlocked process runs none).
        var ranOn: String?
        // A descendant's stall too: the program (a launcher waiting for it) exited by its own
        // status with no signal passed on, so the stalled process ended or ran on by itself
        // (a launcher's Python child woken by its own handler stayed `deadlocked … then the
        // program exited with status 0`: re-trial 33c).
        // Not a named cycle: a test's SIGKILL of the deadlocked child, which strain cannot see,
        // let its launcher exit 0 too.
        if let stall, stall.pid != program.pid, !stall.named, case .exited = termination, strain_exec_signals_seen() == signalsAtStall {
            ranOn = "by itself"
        }
        if let stall, stall.pid == program.pid {
            let cpuAfter = cpuAtStall.map { Self.seconds(usage) - $0 } ?? 0
            let faultedAfter = probe.secondsSinceWritten("fault-\(program.pid).txt").map { $0 < Double(end &- stallCalledAt) / 1e9 } ?? false
            // A named cycle's threads cannot run, but others can: a JVM's collector and
            // compiler, its shutdown on a SIGTERM (0.10-0.12 s of CPU: re-trial 33h). CPU time
            // or a fault after it is no sign the cycle ended; only an exit by itself is.
            if case .exited = termination, strain_exec_signals_seen() == signalsAtStall {
                ranOn = "by itself"
            } else if !stall.named, cpuAfter >= Self.ranOnCPUSeconds {
                ranOn = "by itself (it used \(String(format: "%.2f", cpuAfter)) s of CPU after the verdict)"
            } else if !stall.named, faultedAfter, probe.faultRecord(pid: program.pid) != nil {
                ranOn = "by itself (it faulted in its own code after the verdict)"
            }
        }
        var classified = classify(termination, fault: probe.faultRecord(pid: program.pid), sanitizerReports: sanitizerReports,
                                  stall: stall, ranOn: ranOn, outsideWait: outsideWait, dumps: dumps, probe: probe, pid: program.pid, request: request)
        classified.metrics.wallSeconds = wall
        if let cut = Self.readAllocations(in: probe.path, pid: program.pid, into: &classified.metrics) { note(cut) }
        // A program run with no arguments is named without an empty `arguments=`.
        let key = TrialKey(scenario: TrialKey.execScenario, parameters: [TrialKey.Parameter(name: "program", value: request.program)]
            + (request.arguments.isEmpty ? [] : [TrialKey.Parameter(name: "arguments", value: Self.shellQuoted(request.arguments))]),
                           strategy: .main, profile: request.profile)
        let expected = [ExpectedOutcome(kind: .completed)]
        let spec = TrialSpec(index: 0, id: TrialID(key: key, repetition: 1), seed: 0, timeoutSeconds: 0,
                             stallSeconds: request.stallSeconds ?? 0, expected: expected)
        var trial = TrialRecordBuilder().record(spec, classified, watched: watched, trialSeconds: wall,
                                                sanitizerReports: sanitizerReports, startedAt: startedAt)
        // The program's pool is libdispatch's: its workers against each platform's cap.
        let verdicts = CapVerdict.verdicts(strategy: .gcdGlobal(.default), needed: peakWorkers > Self.smallestGCDCap ? peakWorkers : nil)
        trial.capVerdicts = verdicts.isEmpty ? nil : verdicts
        let others = processFaults(probe, program: program.pid, request: request, cuts: &cuts)
        trial.processFaults = others.isEmpty ? nil : others
        // A Go program's panic reached the terminal by a path the probe does not see (re-trial 33l, N1: nothing said why).
        if isGo, !notes.contains(Self.staticProgram), trial.lastWords == nil, trial.outcome.kind != .completed { note(Self.goLastWords) }
        // An image without the probe that nothing said before (a wrapper that executed a static program, say).
        if !notes.contains(Self.staticProgram) {
            switch probe.programImage(pid: program.pid) {
            case .neverProbed: note("the program ran without Strain's probe (it did not load LD_PRELOAD): no trace, dumps or stall names")
            case .executedWithoutProbe(let path) where request.follow:
                note("the program executed \(path), which ran without Strain's probe"
                     + (ELFNeededLibraries.isStatic(path: path) == true ? " (statically linked: LD_PRELOAD cannot load it)" : "")
                     + ": no trace, dumps or stall names from it")
            case .probed, .folderDeleted, .executedWithoutProbe: break
            }
        }
        let leftOut = sanitizerRead.leftOut + notes + cuts.all
        trial.leftOut = leftOut.isEmpty ? nil : leftOut
        let run = ResolvedRun(scenario: TrialKey.execScenario, parameters: key.parameters.map { ParameterSweep(name: $0.name, values: [$0.value]) },
                              strategies: [StrategySpec.main.description], profiles: [request.profile.rawValue], repetitions: 1,
                              timeoutSeconds: 0, stallSeconds: request.stallSeconds, expect: ["default": expected.map(\.description)])
        let suite = ResolvedSuite(name: "exec", description: "strain exec -- \(Self.shellQuoted([request.program] + request.arguments))",
                                  path: request.program, repetitions: 1, timeoutSeconds: 0, stallSeconds: request.stallSeconds,
                                  profiles: [request.profile.rawValue], runs: [run])
        var ownUsage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &ownUsage)
        var record = RunRecord(suite: suite, environment: environment, startedAt: startedAt, finishedAt: Date().formatted(.iso8601),
                               runnerPeakRSSBytes: ownUsage.ru_maxrss * 1024, trials: [trial])
        record.plan = PlanRecord(hash: String(format: "%016llx", key.stableHash), trialCount: 1, shard: nil)
        return ExecResult(pid: program.pid, termination: termination, record: record, dumps: dumps, notes: notes)
    }

    /// A stall the watch judged: its verdict, report, the program's wait cycle, the process
    /// it is in, and whether it named a cycle (a descendant's is not kept as the program's
    /// dump's cycle, but no signal or process breaks it either).
    typealias ExecStall = (verdict: ExecStallVerdict, report: StallReport, cycle: WaitCycle?, pid: Int32, named: Bool)

    /// The program's outcome and evidence, the classifier's stage of the pipeline for a
    /// program: its fault record classified as a trial's is (then placed: a fault the
    /// program handled itself, a fault in an image it executed), else its exit status;
    /// a sanitizer's verdict where it recorded no fault; the stall the watchdog called,
    /// with its dump; the runtime's last words, else what it last said on standard error.
    ///
    /// A stall the program then ran on from by itself (`ranOn`) was not one: the verdict
    /// is withdrawn (the program's own ending is the outcome, the verdict kept in its
    /// message), except a named wait cycle (a mutex cycle, a JVM's Java-level deadlock),
    /// which no one inside can break: kept, and the message says the program ran on.
    /// A wait on an outside event is no stall either:
    /// the program's own ending, with what the watch saw.
    private func classify(_ termination: TerminationStatus, fault: FaultRecord?, sanitizerReports: [SanitizerReport], stall: ExecStall?,
                          ranOn: String?, outsideWait: ExecStall?, dumps: [ExecDump], probe: ProbeFolder, pid: Int32,
                          request: ExecRequest) -> OutcomeClassifier.Classified {
        var classified: OutcomeClassifier.Classified
        if let fault, case .exited(let code) = termination {
            // The program's own handler took the signal and the program went on to exit by its
            // status (HotSpot takes SIGSEGVs on purpose: a probe at address 0, implicit null
            // checks, stack banging): the verdict is the program's, as it would be alone.
            let trace = classifier.classify(fault).trace
            let handled = Self.handledFault(fault, code: code, trace: trace, secondsBeforeEnd: probe.secondsSinceWritten("fault-\(pid).txt"),
                                            signalSeen: strain_exec_last_signal())
            classified = OutcomeClassifier.Classified(outcome: TrialOutcome(kind: code == 0 ? .completed : .threw, message: handled))
            // Kept as evidence: a crash reporter that logs and exits by status leaves its fault here.
            if code != 0 { classified.trace = trace }
        } else if let fault, case .signaled(let signal) = termination, !Self.faultSignals.contains(signal), !fault.isOverflow,
                  let seconds = probe.secondsSinceWritten("fault-\(pid).txt"), seconds >= 1 {
            // Handled long before, then killed from outside (SIGKILL, SIGTERM's default): the kill is the ending.
            let earlier = Self.handledEarlier(fault, seconds: seconds, trace: classifier.classify(fault).trace)
            classified = OutcomeClassifier.Classified(outcome: TrialOutcome(kind: .crashed, signal: signal,
                message: "the program was killed by \(SignalName.of(signal)), sent to it; \(earlier)"))
        } else if let fault {
            classified = classifier.classify(fault)
            let after = termination == .signaled(fault.signal) ? "" : "; after the probe passed the signal on, the program \(Self.ended(termination))"
            // After a wrapper's or a shim's exec, the image that faulted is not the one strain started: name it.
            var executed = ""
            if let commandLine = fault.commandLine {
                let shown = commandLine.last == "" ? Array(commandLine.dropLast()) : commandLine
                // A long command line is cut short in the record: a prefix of the program's own is the program's.
                if !([request.program] + request.arguments).joined(separator: "\0").hasPrefix(shown.joined(separator: "\0")) {
                    executed = "; the fault was in \(Self.shellQuoted(shown)), which the program executed (same pid)"
                }
            }
            // Which thread died, where it was not the main one: by its id and the name the program gave it.
            let thread = fault.threadID.flatMap { tid in tid == (fault.pid ?? pid) ? nil
                : "; the fault was in thread \(tid)" + (fault.threadName.map { " (\($0))" } ?? "") + ", not the main thread" } ?? ""
            var message = (classified.outcome.message ?? "") + thread + executed + after
            if message.hasPrefix("; ") { message.removeFirst(2) }
            classified.outcome.message = message.isEmpty ? nil : message
        } else {
            switch termination {
            case .exited(0): classified = OutcomeClassifier.Classified(outcome: .completed)
            case .exited(let code): classified = OutcomeClassifier.Classified(outcome: TrialOutcome(kind: .threw, message: "the program exited with status \(code)"))
            case .signaled(let signal):
                classified = OutcomeClassifier.Classified(outcome: TrialOutcome(kind: .crashed, signal: signal,
                    message: Self.killedWithoutRecord(signal, image: probe.programImage(pid: pid), follow: request.follow)))
            }
        }
        // A crash in a process where ThreadSanitizer saw a race is the race's (a race corrupts
        // memory), its trace kept; an overflow stays an overflow.
        let racedThenCrashed = fault.map { !$0.isOverflow } == true && sanitizerReports.contains(where: \.isRace)
        if fault == nil || racedThenCrashed, let verdict = Self.sanitizerOutcome(sanitizerReports, termination: termination) { classified.outcome = verdict }
        func noting(_ note: String) {
            if let message = classified.outcome.message, !message.isEmpty {
                classified.outcome.message = message + "; before, " + note
            } else {
                classified.outcome.message = note + "; then the program \(Self.ended(termination))"
            }
        }
        if let stall, let kind = stall.verdict.kind {
            if let ranOn, !stall.named {
                noting("--stall called it \(kind.rawValue) (\(stall.verdict.message)), but the program then ran on \(ranOn): the verdict is withdrawn")
            } else {
                let after = ranOn != nil ? " by itself, with no signal passed on by strain: something outside the cycle ended it" : ""
                classified.outcome = TrialOutcome(kind: kind, message: "\(stall.verdict.message); then the program \(Self.ended(termination))\(after)")
                classified.stall = stall.report
            }
        } else if let outsideWait {
            noting("--stall saw it \(ExecStallVerdict.outsideEvent): \(outsideWait.verdict.message)")
        }
        classified.dump = stall.flatMap { _ in dumps.last { $0.stall != nil }?.dump } ?? dumps.last?.dump
        if let cycle = stall?.cycle, classified.dump != nil { classified.dump?.waitCycle = cycle }
        // Glibc's and the Swift runtime's words first; else what the program said on its
        // standard error before it died (Rust's panic, a JVM's uncaught exception).
        classified.lastWords = fault?.lastWords
        if classified.lastWords == nil, classified.outcome.kind != .completed {
            classified.lastWords = probe.standardErrorTail(pid: pid).flatMap(StandardErrorWords.lastWords(in:))
        }
        return classified
    }

    /// CPU time after a stall verdict that says the program ran on: a process whose
    /// every thread waits uses none, and its end (a signal's default action, the
    /// kernel freeing its memory) a few milliseconds of system time.
    static let ranOnCPUSeconds = 0.1

    /// The program's peak RSS: what the samples of VmHWM saw (every 50 ms: a program
    /// that ended before the first sample had none, and its report said "–"), or the
    /// kernel's `ru_maxrss` from `wait4` when that is larger and above strain's own
    /// high-water mark at the spawn. The kernel's figure starts at strain's (posix_spawn
    /// shares strain's memory until the exec, which keeps its high-water mark), so only a
    /// figure above that is the program's; it is the largest of the program and the
    /// descendants it waited for. A program smaller than strain that ended before the
    /// first sample keeps no figure (0: shown "–"), rather than strain's.
    static func peakRSS(sampled: Int, usage: rusage, runnerPeakAtSpawn: Int) -> Int {
        let kernel = Int(usage.ru_maxrss) * 1024
        return kernel > runnerPeakAtSpawn ? max(sampled, kernel) : sampled
    }

    /// Process `pid`'s CPU time so far in seconds, its reaped children's included; nil when gone.
    static func cpuSeconds(pid: Int32) -> Double? {
        StallWatch.cpuTicks(pid: pid, reapedChildren: true).map { Double($0) / Double(max(sysconf(Int32(_SC_CLK_TCK)), 1)) }
    }

    /// User and system time of a `wait4` usage, in seconds.
    static func seconds(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// What a program that handled a fault itself and then exited by `code` did, in order.
    /// A fault long before the end (HotSpot takes a SIGSEGV at 0x0 at start-up on purpose)
    /// is not why it ended; a status over 128 is how a program reports ending itself on
    /// signal `code - 128` (a JVM's 143 after SIGTERM), said with the signal strain saw.
    static func handledFault(_ fault: FaultRecord, code: Int32, trace: FaultTrace?, secondsBeforeEnd: Double?, signalSeen: Int32) -> String {
        let faultText = "\(SignalName.of(fault.signal)) at 0x\(String(fault.address, radix: 16))"
        var status = "exited with status \(code)"
        if code > 128, code - 128 < 65 {
            let signal = code - 128
            let seen = signalSeen == signal ? "; a \(SignalName.of(signal)) was sent to strain and reached it" : ""
            status += " (128 + \(signal): the status of a program that ends itself on \(SignalName.of(signal))\(seen))"
        }
        // A JVM's fault is HotSpot's own, however soon the program ended after it (a Hello
        // world ends within a second of its start-up fault): never said as why it ended.
        let inJVM = isHotSpots(fault, trace: trace)
        guard inJVM || (secondsBeforeEnd ?? 0) >= 1 else {
            return "the program handled \(faultText) itself and \(status)"
        }
        return "the program \(status); " + handledEarlier(fault, seconds: secondsBeforeEnd, trace: trace)
    }

    /// Whether `fault` is in a JVM: in HotSpot's generated code (no module), in a process that maps libjvm.so.
    static func isHotSpots(_ fault: FaultRecord, trace: FaultTrace?) -> Bool {
        JVMThreads.isJVM(maps: fault.maps)
            || ((trace?.firstFrames ?? []) + (trace?.lastFrames ?? [])).contains { $0.moduleName?.hasPrefix("libjvm") == true }
    }

    /// `12.3 s before, it had handled a SIGSEGV at 0x0 itself (HotSpot takes such faults on purpose) and ran on: not why it ended`
    /// (without the time when the fault record's is unknown).
    static func handledEarlier(_ fault: FaultRecord, seconds: Double?, trace: FaultTrace?) -> String {
        let why = isHotSpots(fault, trace: trace) ? " (HotSpot takes such faults on purpose)" : ""
        let when = seconds.map { "\(String(format: "%.1f", $0)) s before, it" } ?? "it"
        return "\(when) had handled a \(SignalName.of(fault.signal)) at 0x\(String(fault.address, radix: 16)) itself\(why) and ran on: not why it ended"
    }

    /// The faults of the program's other processes (a forked child keeps the probe and
    /// writes `fault-PID.txt` of its own), symbolized, each under its pid, parent and
    /// command line. The program's outcome is not theirs.
    /// At most `ProbeFolder.processFaultsReadLimit` of them, for at most
    /// `ProbeFolder.processFaultReadSeconds`: the rest are counted in `cuts`.
    func processFaults(_ probe: ProbeFolder, program: Int32, request: ExecRequest, cuts: inout ProbeFolder.Cuts) -> [ProcessFault] {
        let pids = probe.faultPids().filter { $0 != program }
        let start = strain_monotonic_ns()
        var faults: [ProcessFault] = []
        for (index, pid) in pids.enumerated() {
            if index >= ProbeFolder.processFaultsReadLimit || Double(strain_monotonic_ns() &- start) / 1e9 >= ProbeFolder.processFaultReadSeconds {
                let left = pids.count - index
                let why = index >= ProbeFolder.processFaultsReadLimit ? "at most \(ProbeFolder.processFaultsReadLimit) are read" : "reading them had taken \(Int(ProbeFolder.processFaultReadSeconds)) s"
                cuts.notes.append("\(left) further \(left == 1 ? "fault" : "faults") of the program's other processes not read (\(why))")
                break
            }
            guard let fault = probe.faultRecord(pid: pid) else { continue }
            let classified = classifier.classify(fault)
            guard let trace = classified.trace else { continue }
            faults.append(ProcessFault(pid: pid, parentPid: fault.parentPid, commandLine: fault.commandLine ?? [request.program] + request.arguments,
                                       outcome: classified.outcome,
                                       lastWords: fault.lastWords ?? probe.standardErrorTail(pid: pid).flatMap(StandardErrorWords.lastWords(in:)), trace: trace))
        }
        return faults
    }

    /// The thread of `pid` to ask for --stall's dump: one other than the main thread, asleep
    /// and not holding SIGSYS back; nil when there is none (then the process is asked).
    static func dumpThread(pid: Int32, threads: [ThreadState]) -> Int32? {
        threads.first { thread in
            guard thread.tid != Int(pid), thread.state == "S",
                  let blocked = OutsideWake.statusSignals("/proc/\(pid)/task/\(thread.tid)/status", field: "SigBlk:") else { return false }
            return !blocked.contains(SIGSYS)
        }.map { Int32($0.tid) }
    }

    /// Asks the suspected program for a dump and judges its pools from the stacks;
    /// nil (and the watch restarted) when they are not stuck.
    private func judgeStall(_ suspicion: StallWatch.Suspicion, watch: inout StallWatch, probe: ProbeFolder, pid: Int32,
                            notes: inout [String], collect: (ExecStallVerdict?, RawDump?) -> ExecDump?) -> ExecStall? {
        // A signal handler ends a wait in poll, select, epoll or a sleep with EINTR whatever
        // SA_RESTART says, and a program that does not retry it fails (Foundation's FileHandle
        // dies of a fatal error on EINTR; a C program's poll reported it). When one of the
        // program's threads waits so, its dump is taken with ptrace: the kernel restarts the
        // call after a ptrace stop, and the program never sees it.
        let own = suspicion.processes.first { $0.pid == pid }?.threads ?? suspicion.threads
        // A wait that the dump's signal and its ptrace stop would both end is not dumped, so not judged: said once.
        if let waiting = own.first(where: \.endsOnAnyStop) {
            let text = "--stall took no dump of the program: a thread waits in \(waiting.wait ?? "a call"), which a dump's signal or ptrace stop would end; its stalls are not judged"
            if !notes.contains(text) { notes.append(text) }
            watch.restart(now: strain_monotonic_ns(), threads: suspicion.threads)
            return nil
        }
        // A program that executed an image without the probe (`--no-follow`) does not catch
        // SIGSYS, and the dump's request would kill it (re-trial 33i): walked with ptrace too.
        let probed = OutsideWake.caughtSignals(pid: pid)?.contains(SIGSYS) == true
        let byPtrace = !probed || own.contains(where: \.endsOnASignalHandler)
        var fresh: [String] = []
        let raw: RawDump?
        if byPtrace {
            raw = TrialSupervisor.ptraceDump(pid: pid)
        } else {
            let before = Set(probe.dumpFiles(pid: pid))
            // Asked on a thread other than the main one, the probe asks the main thread last
            // (a Ctrl-C during the dump is then the main thread's, as alone: re-trial 33h's NEW-2).
            var asked = Self.dumpThread(pid: pid, threads: own)
            if asked.map({ strain_tgsigqueue(pid, $0, SIGSYS, UInt(STRAIN_DUMP_REQUEST_VALUE)) }) != 0 {
                asked = nil
                _ = strain_sigqueue(pid, SIGSYS, STRAIN_DUMP_REQUEST_VALUE)
            }
            let deadline = strain_monotonic_ns() &+ 3_000_000_000
            while strain_monotonic_ns() < deadline {
                fresh = probe.dumpFiles(pid: pid).filter { !before.contains($0) }
                if !fresh.isEmpty { break }
                // A program that ended meanwhile writes none (a Ctrl-C during the dump, SIGINT at
                // its default): not waited for, and not judged (its end was held 3 s: re-trial 33h).
                if Self.hasEnded(pid: pid) { return nil }
                usleep(10_000)
            }
            var ignored = ProbeFolder.Cuts()
            var read = fresh.last.flatMap { ProbeFolder.readDump($0, cuts: &ignored) }
            // The thread it was asked on shows where it waited as read just before, not "took the
            // dump request": strain chose it, and it groups with the threads that wait as it does.
            if let asked, let before = own.first(where: { $0.tid == Int(asked) }),
               let index = read?.threads.firstIndex(where: { $0.tid == Int(asked) && $0.wait == ProbeFolder.tookRequest }) {
                read?.threads[index].state = before.state
                read?.threads[index].wait = before.wait
            }
            raw = read
        }
        let taken = byPtrace ? raw : nil
        let dump = raw.map { classifier.dumpBuilder.dump(from: $0) }
        // Each thread's own stack: a dump groups threads by their functions, and two threads in one
        // function at different lines were both placed at the first one's (re-trial 33n, F6).
        let place = { (tid: Int) in
            raw.flatMap { raw in
                var alone = raw
                alone.threads = raw.threads.filter { $0.tid == tid }
                alone.waitCycle = nil
                return Self.place(of: tid, in: classifier.dumpBuilder.dump(from: alone))
            }
        }
        // The dump's copy of the mappings where it has one: a program a Ctrl-C during the dump
        // ended has none left to read, and its Python runtime's SIGINT went unrecognised (re-trial 33h).
        let maps = raw.map(\.maps).flatMap { $0.isEmpty ? nil : $0 } ?? Self.maps(pid: pid)
        let object = { (address: UInt64) in classifier.symbolizer.dataObject(at: address, maps: maps) }
        let processes = suspicion.processes.isEmpty ? [(pid: pid, threads: suspicion.threads)] : suspicion.processes
        let tree = Set(processes.map(\.pid))
        // What outside process `pid` (its mappings given) could still end a wait nothing inside it can.
        func outsideReason(_ judged: Int32, _ judgedMaps: String) -> String? {
            OutsideWake.reason(pid: judged, caught: OutsideWake.caughtSignals(pid: judged), maps: judgedMaps,
                               notes: OutsideWake.handlerNotes(pid: judged, folder: probe.path), processes: processes,
                               handlers: { OutsideWake.ownHandlers(pid: $0, folder: probe.path) })
        }
        // A deadlock with no named cycle while a timer process `timerPID` armed has not fired:
        // no verdict before it has (its block may be what every thread waits for).
        func waitForTimer(pid timerPID: Int32) -> Bool {
            let now = strain_monotonic_ns()
            guard let due = DispatchTimers.pendingSeconds(pid: timerPID, folder: probe.path, now: now) else { return false }
            for file in fresh { unlink(file) }
            if !notes.contains(DispatchTimers.note) { notes.append(DispatchTimers.note) }
            watch.waitForTimer(seconds: due, now: now)
            return true
        }
        // A cycle held beside a thread that runs: only a named cycle is judged; what else waits may be the running thread's to end.
        if suspicion.busy {
            for process in processes {
                let processMaps = process.pid == pid ? maps : Self.maps(pid: process.pid)
                guard let cycle = LockWaits(threads: process.threads, readWord: LockWaits.reader(pid: process.pid))
                    .waitCycle(threads: process.threads, place: process.pid == pid ? place : { _ in nil },
                               object: { classifier.symbolizer.dataObject(at: $0, maps: processMaps) }) else { continue }
                var verdict = LockWaits.cycleVerdict(cycle, silentSeconds: suspicion.silentSeconds, busy: true)
                if process.pid != pid {
                    let command = Self.commandLine(pid: process.pid).map { ", " + Self.shellQuoted($0) } ?? ""
                    verdict.message = "in process \(process.pid) (a descendant of the program\(command)): " + verdict.message
                }
                _ = collect(verdict, taken)
                return (verdict, suspicion.report(thresholdSeconds: watch.thresholdSeconds), process.pid == pid ? cycle : nil, process.pid, true)
            }
            for file in fresh { unlink(file) }
            return nil
        }
        let judgement = dump.map { StallWatch.judgement($0, suspicion: suspicion) } ?? .none
        if judgement == .watchPoolGrowth {
            // Every Dispatch worker blocked: a deadlock only if the pool does not grow meanwhile.
            for file in fresh { unlink(file) }
            watch.waitForPoolGrowth(before: suspicion.threads, clock: { strain_monotonic_ns() })
            return nil
        }
        if case .verdict(var verdict) = judgement {
            // A pool's stuck threads may wait on mutexes too: the cycle, when the holders close one.
            let cycle = LockWaits(threads: suspicion.threads, readWord: LockWaits.reader(pid: pid)).waitCycle(threads: suspicion.threads, place: place, object: object)
            // A named cycle is a deadlock whatever the pool did meanwhile (a block that came late and
            // waits on it), and the verdict names it (re-trial 33j: only run.json and the advice did).
            if let cycle, verdict.kind != nil {
                verdict = LockWaits.cycleVerdict(cycle, silentSeconds: suspicion.silentSeconds, pool: verdict.pool)
            }
            if verdict.kind == .deadlocked, cycle == nil, waitForTimer(pid: pid) { return nil }
            if verdict.kind == .deadlocked, cycle == nil,
               let reason = outsideReason(pid, maps) {
                verdict = Self.outsideEvent(verdict, reason: reason)
            }
            _ = collect(verdict, taken)
            return (verdict, suspicion.report(thresholdSeconds: watch.thresholdSeconds, verdict: verdict), cycle, pid, cycle != nil)
        }
        // No pool: threads of any program blocked on locks, judged from /proc and the locks themselves,
        // process by process (the program's first: only it answers dumps, which say where a thread waits).
        for process in processes {
            let isProgram = process.pid == pid
            let processMaps = isProgram ? maps : Self.maps(pid: process.pid)
            guard let judged = LockWaits.judge(threads: process.threads, silentSeconds: suspicion.silentSeconds,
                                               readWord: LockWaits.reader(pid: process.pid), place: isProgram ? place : { _ in nil },
                                               object: { classifier.symbolizer.dataObject(at: $0, maps: processMaps) },
                                               readsOwnPipe: { OutsideWake.readsTreesOwnPipe(pid: process.pid, thread: $0, tree: tree) }) else { continue }
            var verdict = judged.verdict
            let cycle = judged.cycle
            if verdict.kind == .deadlocked, cycle == nil, waitForTimer(pid: process.pid) { return nil }
            if cycle == nil, let reason = outsideReason(process.pid, processMaps) {
                verdict = Self.outsideEvent(verdict, reason: reason)
            }
            if !isProgram {
                let command = Self.commandLine(pid: process.pid).map { ", " + Self.shellQuoted($0) } ?? ""
                verdict.message = "in process \(process.pid) (a descendant of the program\(command)): " + verdict.message
            }
            _ = collect(verdict, taken)
            return (verdict, suspicion.report(thresholdSeconds: watch.thresholdSeconds), isProgram ? cycle : nil, process.pid, cycle != nil)
        }
        // A JVM's monitor waits are timed waits: only the JVM itself can name a Java-level deadlock.
        for process in processes {
            let processMaps = process.pid == pid ? maps : Self.maps(pid: process.pid)
            guard JVMThreads.isJVM(maps: processMaps) else { continue }
            guard let jcmd = JVMThreads.jcmd(pid: process.pid) else {
                let note = JVMThreads.notJudged(pid: process.pid)
                if !notes.contains(note) { notes.append(note) }
                continue
            }
            let file = (probe.path as NSString).appendingPathComponent("jvm-threads-\(process.pid).txt")
            guard let judged = JVMThreads.judge(pid: process.pid, jcmd: jcmd, file: file, silentSeconds: suspicion.silentSeconds) else { continue }
            var verdict = judged.verdict
            // Threads that all wait with no timeout, with no cycle the JVM names: a shutdown hook, a
            // handler the program installed (`sun.misc.Signal`) or another live process may still end it.
            if !judged.cycle {
                let reasons = [judged.shutdownHook ? JVMThreads.shutdownHookReason : nil, outsideReason(process.pid, processMaps)].compactMap { $0 }
                if !reasons.isEmpty { verdict = Self.outsideEvent(verdict, reason: reasons.joined(separator: "; ")) }
            }
            if process.pid != pid {
                let command = Self.commandLine(pid: process.pid).map { ", " + Self.shellQuoted($0) } ?? ""
                verdict.message = "in process \(process.pid) (a descendant of the program\(command)): " + verdict.message
            }
            _ = collect(verdict, taken)
            return (verdict, suspicion.report(thresholdSeconds: watch.thresholdSeconds), nil, process.pid, judged.cycle)
        }
        // Not stuck: this dump was the watchdog's question only; no one asked to see it.
        for file in fresh { unlink(file) }
        watch.restart(now: strain_monotonic_ns(), threads: suspicion.threads)
        return nil
    }

    /// Whether every thread of process `pid` has ended (a zombie not yet reaped), or it is gone.
    static func hasEnded(pid: Int32) -> Bool {
        ThreadState.tids(pid: String(pid)).allSatisfy { tid in
            ThreadState.read(pid: String(pid), tid: tid).map { $0.state == "Z" || $0.state == "X" } ?? true
        }
    }

    /// A verdict of `deadlocked` taken back because something outside can end the wait:
    /// the same evidence, named for what it is.
    static func outsideEvent(_ verdict: ExecStallVerdict, reason: String) -> ExecStallVerdict {
        let evidence = verdict.message.replacingOccurrences(of: ", so none is left to wake another", with: "")
            .replacingOccurrences(of: ": none can wake another", with: "").replacingOccurrences(of: LockWaits.noWriterLeft, with: "")
        return ExecStallVerdict(kind: nil, message: "\(evidence); not deadlocked: \(reason)")
    }

    /// Process `pid`'s mappings (`/proc/PID/maps`), whole; empty when it is gone.
    /// (Foundation's `String(contentsOfFile:)` stops after the first page of a /proc
    /// file: 4 KiB, where a JVM's maps run to 100 KiB and more.)
    static func maps(pid: Int32) -> String {
        ProcFile.contents(of: "/proc/\(pid)/maps")
    }

    /// A live process's command line (`/proc/PID/cmdline`), or nil.
    static func commandLine(pid: Int32) -> [String]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        return data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }.filter { !$0.isEmpty }
    }

    /// Where thread `tid` waits in `dump`: its innermost frame outside libc and the probe
    /// (the caller of `pthread_mutex_lock`), by name and line, past a language's standard
    /// library compiled into the program (Rust's `std`, libstdc++'s templates): a Rust
    /// `Mutex` cycle was placed `in <std::sys::sync::mutex::futex::Mutex>::lock_contended`
    /// for both threads (re-trial 33m, F1). A frame whose own function is the library's
    /// may have the program's code inlined into it (a thread's closure): that is named.
    /// None for a thread the dump found running: it left its wait after the watch read it (a
    /// Ctrl-C during the dump woke it, and it was exiting: re-trial 33i's NEW-4).
    package static func place(of tid: Int, in dump: ThreadDump) -> String? {
        guard let group = dump.groups.first(where: { $0.threads.contains { $0.tid == tid } }),
              group.threads.contains(where: { $0.tid == tid && ($0.state != "R" || $0.wait != nil) }) else { return nil }
        let frames = group.frames.filter { frame in
            guard frame.symbol != nil else { return false }
            let module = frame.moduleName ?? ""
            return !module.hasPrefix("libc.so") && !module.hasPrefix("libpthread") && !module.hasPrefix("libStrainProbe")
        }
        for frame in frames {
            guard let symbol = frame.symbol, ThreadDumpBuilder.isLanguageRuntime(symbol) else { return frame.displayName }
            if let own = frame.inlined?.first(where: { $0.symbol.map { !ThreadDumpBuilder.isLanguageRuntime($0) } ?? false }) {
                return Frame(address: frame.address, module: frame.module, symbol: own.symbol, file: own.file, line: own.line, column: own.column).displayName
            }
        }
        return frames.first?.displayName
    }

    /// The shared sanitizer runtimes (`libtsan.so.2`, `libasan.so.8`) `program` names as
    /// needed, found on `path` when it has no slash; none for a script or a program whose
    /// runtime is linked in (swiftc's and clang's are).
    static func sanitizerRuntimes(of program: String, path: String?) -> [String] {
        let file = resolved(program, path: path)
        let prefixes = ["libtsan.so", "libasan.so", "libclang_rt.tsan", "libclang_rt.asan"]
        return (ELFNeededLibraries.of(path: file) ?? []).filter { library in prefixes.contains { library.hasPrefix($0) } }
    }

    /// The outcome a sanitizer's reports make of a program that recorded no fault of its
    /// own: `dataRace` when ThreadSanitizer saw a race, `crashed` when AddressSanitizer
    /// stopped the program; nil when there is nothing to say. The exit status stays the program's.
    static func sanitizerOutcome(_ reports: [SanitizerReport], termination: TerminationStatus) -> TrialOutcome? {
        let races = reports.filter(\.isRace)
        if !races.isEmpty {
            let count = races.reduce(0) { $0 + $1.count }
            let distinct = races.count == count ? "" : " (\(races.count) distinct)"
            return TrialOutcome(kind: .dataRace, message: "ThreadSanitizer reported \(count) race\(count == 1 ? "" : "s")\(distinct); the program \(ended(termination))")
        }
        guard let first = reports.first(where: { $0.tool == .addressSanitizer }) else { return nil }
        var signal: Int32?
        if case .signaled(let number) = termination { signal = number }
        return TrialOutcome(kind: .crashed, signal: signal, message: "AddressSanitizer: \(first.kind); the program \(ended(termination))")
    }

    /// `program` as posix_spawnp finds it: itself when it has a slash, else the first executable of that name on `path`.
    static func resolved(_ program: String, path: String?) -> String {
        guard !program.contains("/") else { return program }
        return (path ?? "").split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? program
    }

    /// Said when the program strain starts is statically linked.
    static let staticProgram = "the program is statically linked: LD_PRELOAD cannot load Strain's probe into it; no trace, dumps or stall names"
    /// Said when a Go program ends badly with no last words: Go's runtime writes with raw system calls.
    static let goLastWords = "the program is a Go program: its runtime writes a panic's message to standard error with raw system calls, "
        + "which Strain's probe cannot see, so the record has no last words (read them where the program's standard error went)"

    /// The smallest GCD thread cap of any profile (64, Apple's).
    static let smallestGCDCap = Profile.allCases.map(\.gcdThreadCap).min() ?? 64

    /// The program's libdispatch workers now: threads named after a root queue
    /// (`com.apple.root.default-qos`, cut to its last 15 characters, `oot.default-qos`).
    /// A new worker starts only while the others are busy, so their peak is how
    /// many the program needed at once.
    static func dispatchWorkers(pid: Int32) -> Int {
        ThreadState.tids(pid: String(pid)).filter { tid in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
            return name.contains("qos")
        }.count
    }

    /// The program's allocations, written by the preloaded probe at its exit
    /// (`allocations-PID.txt`); absent when it ended without running its exit
    /// (killed, `_exit`) or allocated through an allocator of its own.
    /// What was not recorded, and why, when the file's counts are out of range.
    @discardableResult
    static func readAllocations(in folder: String, pid: Int32, into metrics: inout TrialMetrics) -> String? {
        guard let text = ProgramFile.head("\(folder)/allocations-\(pid).txt", limit: ProbeFolder.dumpByteLimit)?.text else { return nil }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let value = Int(fields[1]) { values[String(fields[0])] = value }
        }
        guard let allocations = values["allocations"], let bytes = values["bytes"], let frees = values["frees"] else { return nil }
        // The program can write this file too: a count no run could have made (negative,
        // past 2^53) is not recorded, or the record would be refused by every reader.
        guard [allocations, bytes, frees].allSatisfy(RecordRanges.count.contains) else {
            return "allocations-\(pid).txt holds a count outside 0…2^53: the program's allocations are not recorded"
        }
        metrics.allocations = allocations
        metrics.allocatedBytes = bytes
        metrics.frees = frees
        return nil
    }

    /// Why the program is stopped, or nil when it is not: `/proc/PID/stat`'s state `T`
    /// (a stop signal) or `t` (a tracer's stop), and the tracer from `status`.
    static func stoppedState(pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        guard state == "T" || state == "t" else { return nil }
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let tracer = status.split(separator: "\n").first { $0.hasPrefix("TracerPid:") }
            .flatMap { Int32($0.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        if tracer != 0 {
            let mine = tracer == getpid() ? " (strain itself)" : ""
            return "the program (pid \(pid)) is stopped for its tracer, pid \(tracer)\(mine): strain waits until the tracer lets it go on"
        }
        if state == "t" {
            return "the program (pid \(pid)) is stopped as a traced process whose tracer has gone (it called PTRACE_TRACEME, or was traced): strain waits; kill -CONT \(pid) or kill \(pid) ends the wait"
        }
        return "the program (pid \(pid)) is stopped (SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU): strain waits for it to go on or end; kill -CONT \(pid) continues it"
    }

    /// Signals the kernel sends a process for its own fault (or abort).
    static let faultSignals: Set<Int32> = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS]

    /// Why a program killed by `signal` left no fault record: a probed image records its
    /// own faults, so the signal was sent to it; an image without the probe records
    /// nothing, and a fault there is all Strain can say.
    static func killedWithoutRecord(_ signal: Int32, image: ProbeFolder.ProgramImage, follow: Bool) -> String {
        let name = SignalName.of(signal)
        let why: String
        switch image {
        case .probed:
            // Sent, or raised: `raise(SIGTERM)` and a write to a closed pipe's SIGPIPE are the program's own (re-trial 33o, F3).
            return "the program was killed by \(name) (sent to it, or raised by itself: no fault of its own was recorded)"
        case .folderDeleted:
            return "the program was killed by \(name), and Strain's probe folder was deleted or replaced while it ran (by the program or something it started),"
                + " with any fault record the probe wrote there: no trace can be shown"
        case .neverProbed:
            why = "the program as started had no probe: a static binary, or one that does not load LD_PRELOAD"
        case .executedWithoutProbe(let path):
            why = follow
                ? "the program executed \(path), which ran without the probe: a static binary, or one that does not load LD_PRELOAD"
                : "the program executed \(path), which --no-follow left without the probe"
        }
        if faultSignals.contains(signal) {
            return "the program was killed by \(name): a fault in a process Strain did not probe (\(why)), so no trace was taken"
        }
        return "the program was killed by \(name) in a process Strain did not probe (\(why))"
    }

    /// `exited with status 3`, `was killed by SIGKILL`.
    static func ended(_ termination: TerminationStatus) -> String {
        switch termination {
        case .exited: termination.description
        case .signaled: "was " + termination.description
        }
    }

    /// `a 'b c'`: arguments as a POSIX shell would read them back.
    package static func shellQuoted(_ arguments: [String]) -> String {
        arguments.map { argument in
            let plain = !argument.isEmpty && argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0) }
            return plain ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }.joined(separator: " ")
    }
}
