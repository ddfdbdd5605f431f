import CStrainProbe
import Foundation
import StrainKit
import Synchronization
import Testing

/// A `.thread(stackBytes:)` trial's closure starts as far above its stack's end as
/// a plain `Thread`'s closure does (the fixture's bisection checks the same with real
/// overflows, in StrainTestingTests).
@Suite struct PlainThreadRoomTests {
    private struct Quiet: Scenario {
        static let name = "quiet"
        static let summary = "does nothing"
        init(parameters: ParameterValues) throws {}
        func prepare(context: ScenarioContext) throws -> Workload { { _ in } }
    }

    static let stackBytes = 512 << 10

    /// The room a plain 512 KiB `Thread`'s closure has below it, from a call on its first line.
    static func plainRoom() -> Int {
        let room = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var here = strain_stack_place()
            strain_stack_measure(&here)
            room.withLock { $0 = here.room }
            done.signal()
        }
        thread.stackSize = stackBytes
        thread.start()
        done.wait() // off the pool: the tests call plainRoom on an OffPool thread
        return room.withLock { $0 }
    }

    /// The room a closure has on a trial thread, and the thread's report (`perform`
    /// waits for the trial thread: call it off the pool).
    static func trialRoom(plainRoomAsked: Bool) throws -> (room: Int, report: ThreadReport?) {
        let context = ScenarioContext(parameters: ParameterValues([:], for: Quiet.self), seed: 1, profile: .linux)
        context.givesPlainThreadRoom.store(plainRoomAsked, ordering: .releasing)
        let executor = StrategySpec.thread(stackBytes: stackBytes).makeExecutor(context: context)
        let room = Mutex(0)
        try executor.perform {
            try PlainThreadRoom.call(PlainThreadRoom.Call {
                var here = strain_stack_place()
                strain_stack_measure(&here)
                room.withLock { $0 = here.room }
            })
        }
        return (room.withLock { $0 }, context.reports.first)
    }

    @Test func aThreadTrialsClosureHasThePlainThreadsRoomAndReportsTheSizeAskedFor() async throws {
        let plain = await OffPool.run { Self.plainRoom() }
        let trial = try await OffPool.run { try Self.trialRoom(plainRoomAsked: true) }
        #expect(plain > 400 << 10, "a plain thread's closure has most of its 512 KiB: \(plain)")
        #expect(abs(trial.room - plain) < 16, "trial \(trial.room) bytes below the closure, plain \(plain)")
        #expect(trial.report?.stackSizeBytes == Self.stackBytes, "\(String(describing: trial.report))")
        // Counted from where a plain thread's top would be: what its closure started below, not the 64 KiB more.
        if let high = trial.report?.stackHighWaterBytes { #expect(high < 32 << 10, "high water \(high)") }
    }

    @Test func aScenarioThatDoesNotAskKeepsTheHarnessFramesAboveItsWork() async throws {
        let plain = await OffPool.run { Self.plainRoom() }
        let trial = try await OffPool.run { try Self.trialRoom(plainRoomAsked: false) }
        #expect(trial.room < plain, "trial \(trial.room), plain \(plain): the harness's frames sit above the work")
        #expect(trial.report?.stackSizeBytes == Self.stackBytes)
    }
}
