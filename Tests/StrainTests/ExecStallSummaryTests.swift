import Foundation
import Glibc
import StrainExec
import StrainKit
import StrainRunner
import StrainWire
import Testing
@testable import StrainSymbols

/// A stall's one-line summary names the first frame of the program's own code, inlined
/// or not. Before, it dropped every frame whose symbol ends in `[partial apply]` and
/// ignored a frame's inlined functions, so a release build's summary named the idle
/// loop (`EventLoop.runOneLoopTick()`) instead of the code that blocked.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecStallSummaryTests {
    /// Fixtures/programs/loop.swift in release. The LLVM inline threshold is raised so
    /// that the queued closure, and its wait, are compiled into the closure's
    /// partial-apply forwarder (plain `-O` here tail-calls the closure from the
    /// forwarder; SwiftNIO's event-loop closures end up inside it).
    static let built = AsyncOnce<String> {
        let output = TestPrograms.folder + "/loop"
        try await TestPrograms.compile(["swiftc", "-O", "-Xllvm", "-inline-threshold=5000", "-g", "-o", output, TestPrograms.sources + "/loop.swift"])
        return output
    }

    @Test(arguments: [
        ("forwarder", "closure #1 in LoopPieces.scheduleBlockingWait()"),
        ("inlined", "LoopPieces.waitForAnswer()"),
    ])
    func aStallSummaryNamesTheProgramsOwnWaitingCodeNotTheIdleLoop(mode: String, expected: String) async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--stall", "500ms", "--", program, mode], out: out, environment: ["SWIFT_BACKTRACE": "enable=no"])
        defer { running.stop() }
        #expect(dumped, "the watchdog dumped the stuck loop")
        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 20)
        #expect(result.termination == .signaled(SIGKILL))
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let group = try #require(trial.dump?.groups.first { $0.frames.contains { $0.symbol?.contains("EventLoop.runOneLoopTick") == true } },
                                 "\(trial.dump?.groups.map(\.summary) ?? [])")
        // What the release build made of the code: the reason the summary missed it.
        let frames = group.frames.map { frame in ([frame.symbol ?? "?"] + (frame.inlined ?? []).compactMap(\.symbol)).joined(separator: " + ") }
        if mode == "forwarder" {
            #expect(group.frames.contains { $0.symbol == expected + " [partial apply]" }, "the wait is in the forwarder: \(frames)")
        } else {
            #expect(group.frames.contains { $0.inlined?.contains { $0.symbol == expected } == true }, "the wait is inlined: \(frames)")
        }
        let parts = group.summary.components(separatedBy: " ← ")
        #expect(parts.count > 2 && parts[1] == expected && parts[2] == "EventLoop.runOneLoopTick()", "\(group.summary)")
        #expect(result.stderr.contains("← \(expected) ← EventLoop.runOneLoopTick()"), "the terminal's line too: \(result.stderr.suffix(1500))")
    }

    /// A Rust `Mutex` cycle placed each thread in the standard library's lock, compiled
    /// into the program (`<std::sys::sync::mutex::futex::Mutex>::lock_contended`): the
    /// place is the program's own function, or its closure inlined into std's thread
    /// start (re-trial 33m, F1).
    @Test func aLockWaitIsPlacedInTheProgramsCodeNotItsLanguagesStandardLibrary() {
        let program = "/app/rs_mutex"
        func dump(_ frames: [Frame]) -> ThreadDump {
            ThreadDump(method: "signal", threadCount: 1, groups: [
                ThreadGroup(count: 1, summary: "", inWork: false, threads: [DumpedThread(tid: 7, name: "mover", state: "S", wait: "futex wait", viaPtrace: false)], frames: frames),
            ], waitCycle: nil, unreached: [], dumpNanoseconds: 1)
        }
        let contended = Frame(address: 1, module: program, symbol: "<std::sys::sync::mutex::futex::Mutex>::lock_contended", file: "futex.rs", line: 61, column: 13)
        let main = dump([Frame(address: 0, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "syscall"), contended,
                         Frame(address: 2, module: program, symbol: "rs_mutex::main", file: "rs_mutex.rs", line: 5, column: 80,
                               inlined: [InlinedFrame(symbol: "std::sync::mutex::Mutex<T>::lock", file: "mutex.rs", line: 317, column: 9)])])
        #expect(ExecSupervisor.place(of: 7, in: main) == "rs_mutex::main at rs_mutex.rs:5:80 (rs_mutex)")
        let mover = dump([contended,
                          Frame(address: 3, module: program, symbol: "std::sys::backtrace::__rust_begin_short_backtrace",
                                inlined: [InlinedFrame(symbol: "std::sync::mutex::Mutex<T>::lock", file: "mutex.rs", line: 317, column: 9),
                                          InlinedFrame(symbol: "rs_mutex::main::{{closure}}", file: "rs_mutex.rs", line: 4, column: 146)])])
        #expect(ExecSupervisor.place(of: 7, in: mover) == "rs_mutex::main::{{closure}} at rs_mutex.rs:4:146 (rs_mutex)")
        // A C++ std::mutex's lock is libstdc++'s gthread wrapper, compiled into the program: the place is past it (re-trial 33n, R4).
        let cxx = dump([Frame(address: 0, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "pthread_mutex_lock"),
                        Frame(address: 5, module: "/app/bank", symbol: "__gthread_mutex_lock", file: "gthr-default.h", line: 749, column: 41),
                        Frame(address: 6, module: "/app/bank", symbol: "std::mutex::lock()", file: "std_mutex.h", line: 113, column: 30),
                        Frame(address: 7, module: "/app/bank", symbol: "std::lock_guard<std::mutex>::lock_guard(std::mutex&)", file: "std_mutex.h", line: 249, column: 19),
                        Frame(address: 8, module: "/app/bank", symbol: "(anonymous namespace)::Bank::withBoth()", file: "bank.cpp", line: 8, column: 3)])
        #expect(ExecSupervisor.place(of: 7, in: cxx) == "(anonymous namespace)::Bank::withBoth() at bank.cpp:8:3 (bank)")
        // A C program's caller of pthread_mutex_lock stays the place.
        let c = dump([Frame(address: 0, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "pthread_mutex_lock"),
                      Frame(address: 4, module: "/app/locks", symbol: "worker", file: "locks.c", line: 12, column: 5)])
        #expect(ExecSupervisor.place(of: 7, in: c) == "worker at locks.c:12:5 (locks)")
    }

    @Test func aSummarySkipsLibraryFramesBetweenTheWaitAndTheProgramsCode() {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let frames = [
            Frame(address: 1, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "syscall"),
            Frame(address: 2, module: "/opt/swift/usr/lib/swift/linux/libswiftDispatch.so", symbol: "DispatchSemaphore.wait()"),
            Frame(address: 3, module: "/opt/swift/usr/lib/swift/linux/libswiftCore.so", symbol: "Array.forEach(_:)"),
            Frame(address: 4, module: "/opt/swift/usr/lib/swift/linux/libswiftCore.so", symbol: "Sequence.map<A>(_:)"),
            Frame(address: 5, module: "/app/server", symbol: "reabstraction thunk [partial apply]",
                  inlined: [InlinedFrame(symbol: "closure #1 in Pieces.run()", file: "Pieces.swift", line: 48, column: 9)]),
            Frame(address: 6, module: "/app/server", symbol: "Loop.tick()"),
        ]
        #expect(builder.summary(wait: "futex wait", frames: frames) == "futex wait ← DispatchSemaphore.wait() ← closure #1 in Pieces.run() ← Loop.tick()")
    }

    /// A C block stuck on a semaphore in a GCD pool: its body, `__main_block_invoke` (clang's
    /// name for a block in `main`), is the program's code, though its name starts with an
    /// underscore; libdispatch's own blocks are not. The summary said only `futex wait`
    /// (re-trial 33l, F1, 4 of 4).
    @Test func aSummaryNamesTheProgramsOwnBlockButNotALibrarysInternals() {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let dispatch = "/opt/swift/usr/lib/swift/linux/libdispatch.so"
        let frames = [
            Frame(address: 1, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "syscall"),
            Frame(address: 2, module: dispatch, symbol: "_dispatch_sema4_wait"),
            Frame(address: 3, module: dispatch, symbol: "dispatch_semaphore_wait"),
            Frame(address: 4, module: "/app/c_dispatch_starve", symbol: "__main_block_invoke"),
            Frame(address: 5, module: dispatch, symbol: "__dispatch_apply_block_invoke"),
            Frame(address: 6, module: dispatch, symbol: "_dispatch_call_block_and_release"),
            Frame(address: 7, module: dispatch, symbol: "_dispatch_worker_thread2"),
        ]
        #expect(builder.summary(wait: "futex wait", frames: frames) == "futex wait ← dispatch_semaphore_wait ← __main_block_invoke")
    }

    /// The thread that took a `strain exec` dump request was interrupted by it, so /proc
    /// shows it answering; its summary said `took the dump request ← main` and dropped the
    /// libc wait its frames show (a C program's `sem_wait`, its `pthread_join`).
    @Test func theThreadThatTookTheDumpRequestIsSummarisedWithTheWaitItWasIn() {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let frames = [
            Frame(address: 1, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "__new_sem_wait_slow64"),
            Frame(address: 2, module: "/app/c_fork_sem", symbol: "main"),
        ]
        #expect(builder.summary(wait: ProbeFolder.tookRequest, frames: frames) == "took the dump request in __new_sem_wait_slow64 ← main")
        #expect(builder.summary(wait: "futex wait", frames: frames) == "futex wait ← main", "another thread's wait is /proc's")
        // glibc's futex helper, under every wait, is not the wait: the call above it is (a re-trial saw
        // `took the dump request in __futex_abstimed_wait_common64` for a sem_wait and a pthread_join).
        let futex = [Frame(address: 8, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "__futex_abstimed_wait_common64")] + frames
        #expect(builder.summary(wait: ProbeFolder.tookRequest, frames: futex) == "took the dump request in __new_sem_wait_slow64 ← main", "\(builder.summary(wait: ProbeFolder.tookRequest, frames: futex))")
        let handler = [Frame(address: 9, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "__restore_rt")] + frames
        #expect(builder.summary(wait: ProbeFolder.tookRequest, frames: handler) == "took the dump request in __new_sem_wait_slow64 ← main", "past the signal's return frame")
        // Nor libc's `syscall`, through which libdispatch makes its futex calls (a one-thread program
        // waiting in a `sync` read `took the dump request in syscall`: re-trial 33j's NEW-7).
        let dispatch = "/opt/swift/usr/lib/swift/linux/libdispatch.so"
        let sync = [Frame(address: 10, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "syscall"),
                    Frame(address: 11, module: dispatch, symbol: "_dispatch_futex_wait"),
                    Frame(address: 12, module: dispatch, symbol: "_dispatch_thread_event_wait_slow"),
                    Frame(address: 13, module: dispatch, symbol: "_dispatch_sync_f_slow"),
                    Frame(address: 14, module: "/app/one_thread", symbol: "main")]
        #expect(builder.summary(wait: ProbeFolder.tookRequest, frames: sync) == "took the dump request in _dispatch_thread_event_wait_slow ← main", "\(builder.summary(wait: ProbeFolder.tookRequest, frames: sync))")
    }

    /// Two threads parked in the same place, one of which took the dump request (a Go
    /// program's): each is its own group, the taker's line names its wait once
    /// (`in runtime.notesleep ← runtime.mPark ← …`, not `in runtime.futex.abi0 ←
    /// runtime.futex.abi0 ← …`), and the other's is /proc's wait.
    @Test func theThreadThatTookTheRequestIsGroupedAloneAndItsWaitIsNamedOnce() {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let go = ["runtime.futex.abi0", "runtime.notesleep", "runtime.mPark", "runtime.stopm", "runtime.findRunnable"].enumerated().map {
            Frame(address: UInt64($0.offset + 1), module: "/app/n4_go_chan", symbol: $0.element)
        }
        let summary = builder.summary(wait: ProbeFolder.tookRequest, frames: go)
        #expect(summary == "took the dump request in runtime.notesleep ← runtime.mPark ← runtime.stopm ← runtime.findRunnable", "\(summary)")
        let raw = RawDump(method: "signal", threads: [
            RawThread(tid: 10, name: "n4_go_chan", state: ProbeFolder.answeringState, wait: ProbeFolder.tookRequest, inWork: false, frames: [1, 2, 3], viaPtrace: false),
            RawThread(tid: 11, name: "n4_go_chan", state: "S", wait: "futex wait", inWork: false, frames: [1, 2, 3], viaPtrace: false),
        ], maps: "", unanswered: [], dumpNanoseconds: 0, waitCycle: nil)
        let dump = builder.dump(from: raw)
        #expect(dump.groups.count == 2 && dump.groups.allSatisfy { $0.count == 1 }, "\(dump.groups.map(\.summary))")
        #expect(dump.groups.contains { $0.summary.hasPrefix("took the dump request") && $0.threads.map(\.tid) == [10] })
    }

    /// A Python C extension's own functions begin with its module's underscored name:
    /// they are the wait, not a runtime's internals (`_multiprocessing_SemLock_acquire_impl`
    /// was dropped and generic interpreter frames named instead); `_PyEval_…` still is.
    @Test func anExtensionModulesOwnUnderscoredFunctionsAreNamed() {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let module = "/usr/lib/python3.11/lib-dynload/_multiprocessing.cpython-311-x86_64-linux-gnu.so"
        let frames = [
            Frame(address: 1, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "__new_sem_wait_slow64"),
            Frame(address: 2, module: module, symbol: "_multiprocessing_SemLock_acquire_impl"),
            Frame(address: 3, module: module, symbol: "_multiprocessing_SemLock_acquire"),
            Frame(address: 4, module: "/usr/bin/python3.11", symbol: "_PyEval_EvalFrameDefault"),
            Frame(address: 5, module: "/usr/bin/python3.11", symbol: "PyEval_EvalCode"),
        ]
        #expect(builder.summary(wait: "futex wait", frames: frames) == "futex wait ← _multiprocessing_SemLock_acquire_impl ← PyEval_EvalCode")
        #expect(ThreadDumpBuilder.isNamedForItsModule("_multiprocessing_x", module: "_multiprocessing.cpython-311-x86_64-linux-gnu.so"))
        #expect(!ThreadDumpBuilder.isNamedForItsModule("_PyEval_EvalFrameDefault", module: "python3.11"))
    }

    /// Rust links its standard library into the program, and C++ instantiates
    /// libstdc++'s templates there: their frames are in the program's image, yet not its
    /// code. A Rust stall's summary stopped at `std::sync::…` frames and never reached
    /// `main::…`; the program's own function is named after what it waits in.
    @Test(arguments: [
        (["std::sys::sync::mutex::futex::Mutex::lock_contended", "std::sync::mutex::Mutex<T>::lock", "<std::sync::poison::Flag as core::ops::drop::Drop>::drop",
          "deadlock::transfer", "deadlock::main::{{closure}}", "std::sys::backtrace::__rust_begin_short_backtrace"],
         "futex wait ← std::sys::sync::mutex::futex::Mutex::lock_contended ← deadlock::transfer ← deadlock::main::{{closure}} ← …"),
        (["__gthread_mutex_lock", "std::mutex::lock()", "std::lock_guard<std::mutex>::lock_guard(std::mutex&)", "main::{lambda()#1}::operator()() const",
          "std::thread::_Invoker<std::tuple<main::{lambda()#1}> >::_M_run()"],
         "futex wait ← std::mutex::lock() ← main::{lambda()#1}::operator()() const ← std::thread::_Invoker<std::tuple<main::{lambda()#1}> >::_M_run()"),
    ])
    func aSummaryNamesTheProgramsCodeAboveTheStandardLibraryLinkedIntoIt(symbols: [String], expected: String) {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let frames = [Frame(address: 1, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "syscall")]
            + symbols.enumerated().map { Frame(address: UInt64($0.offset + 2), module: "/app/deadlock", symbol: $0.element) }
        #expect(builder.summary(wait: "futex wait", frames: frames) == expected)
    }
}
