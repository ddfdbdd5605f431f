import CStrainProbe
import Foundation
@testable import StrainHost
import StrainKit
@testable import StrainRunner
import StrainScenarios
@testable import StrainSuite
@testable import StrainSymbols
@testable import StrainWire
import Synchronization
import Testing

/// The watchdog's pieces that need no child: wait cycles, /proc wait states,
/// dump summaries, cap verdicts, the new strategies and the suite's `stall:`.
@Suite struct WatchdogTests {
    @Test func twoThreadsEachHoldingWhatTheOtherWaitsForCloseACycle() throws {
        let cycle = try #require(WaitCycle.find(in: [
            .init(tid: 11, resource: "B", holding: "A"),
            .init(tid: 12, resource: "A", holding: "B"),
            .init(tid: 13, resource: "A", holding: nil),  // waits too, holds nothing: not in the cycle
        ]))
        #expect(cycle.links.map(\.tid).sorted() == [11, 12])
        #expect(cycle.description.contains("thread 11 holds A and waits for B"))
        #expect(cycle.description.contains("thread 12 holds B and waits for A"))
    }

    @Test func aThreadWaitingForWhatItHoldsIsACycleOfOne() throws {
        let cycle = try #require(WaitCycle.find(in: [.init(tid: 5, resource: "Q", holding: "Q")]))
        #expect(cycle.links.count == 1)
        #expect(cycle.description.contains("which only it can release"))
    }

    @Test func waitsThatLeadToAFreeResourceCloseNoCycle() {
        #expect(WaitCycle.find(in: [
            .init(tid: 1, resource: "B", holding: "A"),
            .init(tid: 2, resource: "C", holding: "B"),
        ]) == nil)
    }

    @Test func procSyscallArgumentsTellUntimedFromTimedWaits() {
        func state(_ syscall: Int?, _ arguments: [UInt64], state: String = "S") -> ThreadState {
            ThreadState(tid: 1, name: "t", state: state, syscall: syscall, arguments: arguments)
        }
        // futex(uaddr, FUTEX_WAIT_BITSET|PRIVATE|CLOCK_REALTIME, val, timeout = NULL)
        #expect(state(202, [0x5600, 0x189, 0, 0, 0, 0xffff_ffff]).wait == "futex wait")
        #expect(state(202, [0x5600, 0x189, 0, 0, 0, 0xffff_ffff]).isInUntimedWait)
        #expect(state(202, [0x5600, 0x189, 0, 0x7ffd_1000, 0, 0]).wait == "futex wait (timed)")
        #expect(!state(202, [0x5600, 0x189, 0, 0x7ffd_1000, 0, 0]).isInUntimedWait)
        #expect(state(230, [1, 0, 0x7ffd_1000, 0, 0, 0]).wait == "sleep (nanosleep)")
        #expect(!state(230, [1, 0, 0x7ffd_1000, 0, 0, 0]).isInUntimedWait)
        #expect(state(232, [3, 0x7f00, 16, 0xffff_ffff_ffff_ffff, 0, 0]).wait == "epoll wait")
        #expect(state(nil, [], state: "R").wait == nil)
        // rt_sigsuspend, where dispatch_main parks the main thread: named (it read
        // "syscall 130"), and not a block that could make a verdict of its own.
        #if arch(x86_64)
        #expect(state(130, [0x7ffd_1000, 8, 0, 0, 0, 0]).wait == "sigsuspend")
        #expect(!state(130, [0x7ffd_1000, 8, 0, 0, 0, 0]).isInUntimedWait)
        #endif
    }

    @Test func thisProcessesThreadsReadFromProcIncludingOneBlockedInASemaphore() async throws {
        let semaphore = DispatchSemaphore(value: 0)
        let tid = Mutex<Int>(0)
        NamedThread.start("strain.test.blk") {
            tid.withLock { $0 = Int(strain_thread_id()) }
            semaphore.wait() // off the pool: a thread of its own, blocked on purpose
        }
        #expect(await eventually(within: 20) { tid.withLock { $0 } != 0 }, "the thread started")
        defer { semaphore.signal() }
        let blocked = tid.withLock { $0 }
        #expect(ThreadState.tids().contains(blocked))
        var state: ThreadState?
        for _ in 0..<200 {
            state = ThreadState.read(tid: blocked)
            if state?.wait == "futex wait" { break }
            await pause(5_000)
        }
        #expect(state?.name == "strain.test.blk")
        #expect(state?.wait == "futex wait", "\(String(describing: state))")
    }

    @Test func aGroupSummaryNamesTheWaitThenTheFramesAboveLibcAndTheHarness() {
        let builder = ThreadDumpBuilder(symbolizer: Symbolizer())
        let frames = [
            Frame(address: 1, module: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "syscall"),
            Frame(address: 2, module: "/opt/swift/usr/lib/swift/linux/libdispatch.so", symbol: "_dispatch_sync_f_slow"),
            Frame(address: 3, module: "/opt/swift/usr/lib/swift/linux/libswiftDispatch.so", symbol: "DispatchQueue.sync(execute:)"),
            Frame(address: 4, module: "/bin/strain", symbol: "closure #2 in ThreadSafeArray.subscript.getter"),
            Frame(address: 5, module: "/bin/strain", symbol: "closure #1 in ThreadSafeArray.subscript.getter"),
            Frame(address: 6, module: "/bin/strain", symbol: "ScenarioContext.blocking<A>(on:holding:_:)"),
            Frame(address: 7, module: "/bin/strain", symbol: "Reader.run()"),
            Frame(address: 8, module: "/bin/strain", symbol: "Reader.start()"),
        ]
        #expect(builder.summary(wait: "futex wait", frames: frames)
            == "futex wait ← DispatchQueue.sync(execute:) ← closure #2 in ThreadSafeArray.subscript.getter ← Reader.run() ← …")
    }

    @Test func blockedWorkersBeyondAPlatformsCapGetOneVerdictPerCap() {
        let apple = CapVerdict.verdicts(strategy: .gcdGlobal(.default), needed: 131)
        #expect(apple.map(\.cap) == [64])
        #expect(apple.first?.message == "needed 131 blocked workers; GCD's cap on ios and macos is 64: this hangs there")
        #expect(CapVerdict.verdicts(strategy: .gcdSerialQueues, needed: 300).map(\.cap) == [64, 255])
        #expect(CapVerdict.verdicts(strategy: .gcdGlobal(.default), needed: 64).isEmpty, "at the cap is still within it")
        #expect(CapVerdict.verdicts(strategy: .threadPool(count: 8, stackBytes: 1 << 20), needed: 300).isEmpty, "threads are not GCD's")
    }

    @Test func theNewStrategiesParseAndPrintBack() throws {
        for text in ["thread-pool(64, 512KiB)", "task", "task(high)", "gcd-serial-queues"] {
            #expect(try StrategySpec(parsing: text).description == text)
        }
        #expect(try StrategySpec(parsing: "thread-pool(8,1MiB)") == .threadPool(count: 8, stackBytes: 1 << 20))
        #expect(try StrategySpec(parsing: "task(medium)") == .task(.medium))
        func problem(_ text: String) -> String {
            do {
                _ = try StrategySpec(parsing: text)
                return ""
            } catch {
                return error.description
            }
        }
        #expect(problem("thread-pool(0, 512KiB)").contains("not a thread count from 1 to 4096"))
        #expect(problem("thread-pool(8)").contains("needs a thread count and a stack size"))
        #expect(problem("thread-pool(8, 4KiB)").contains("under 16KiB"))
        #expect(problem("thread-pool(8").contains("quote this strategy"))
        #expect(problem("task(urgent)").contains("unknown task priority 'urgent'"))
    }

    @Test func stallIsReadPerSuiteAndPerRunAndABadOneNamesItsPlace() throws {
        let parser = SuiteParser(catalog: .builtIn)
        let suite = try parser.parse("""
        name: s
        stall: 250ms
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: noop
            strategies: [gcd-serial]
            stall: 3s
        """, path: "s.yaml")
        #expect(suite.stallSeconds == 0.25)
        #expect(suite.runs.map(\.stallSeconds) == [0.25, 3])
        #expect(Plan(suite: suite).trials.map(\.stallSeconds) == [0.25, 3])
        do {
            _ = try parser.parse("name: s\nstall: soon\nruns:\n  - scenario: noop\n    strategies: [main]\n", path: "s.yaml")
            Issue.record("a bad stall was accepted")
        } catch {
            #expect(error.description.hasPrefix("s.yaml:2:8: error: 'soon' is not a valid value for stall"), "\(error.description)")
        }
    }

    @Test func aLongTimelineIsThinnedKeepingItsEndsAndItsPeaks() {
        let samples = (0..<10_000).map { ThreadSample(seconds: Double($0) / 1000, threads: $0 == 5_000 ? 999 : $0 % 7) }
        let thinned = TrialRecordBuilder.thinned(samples, to: 100)
        #expect(thinned.count <= 100)
        #expect(thinned.first == samples.first)
        #expect(thinned.last == samples.last)
        #expect(thinned.contains { $0.threads == 999 }, "the peak survives")
        #expect(TrialRecordBuilder.thinned(Array(samples.prefix(50)), to: 100).count == 50)
    }

    @Test func theRemoteUnwindRequestIsReadOnlyWhenItsLineIsComplete() {
        let report = Array("RESULT {}\nREMOTE-UNWIND 12 13\n".utf8)
        #expect(TrialSupervisor.remoteUnwindRequest(in: report) == [12, 13])
        #expect(TrialSupervisor.remoteUnwindRequest(in: Array("RESULT {}\nREMOTE-UNWIND 12 1".utf8)) == nil)
        #expect(TrialSupervisor.remoteUnwindRequest(in: Array("RESULT {}\n".utf8)) == nil)
    }

    @Test func closuresAreNamedByTheFunctionTheyAreIn() {
        #expect(SwiftSymbolName.simplify("closure #4 () -> () in closure #1 () -> () in StrainScenarios.SyncCycleScenario.run(context: StrainKit.ScenarioContext) -> ()")
            == "closure #4 in closure #1 in SyncCycleScenario.run(context:)")
        #expect(SwiftSymbolName.simplify("partial apply forwarder for closure #1 @Sendable () -> () in StrainKit.ThreadPoolExecutor.submit(@Sendable () -> ()) -> ()")
            == "closure #1 in ThreadPoolExecutor.submit(_:) [partial apply]")
    }
}
