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
            strain_stack_note()
            var here = 0
            strain_stack_noted(nil, &here, nil)
            room.withLock { $0 = here }
            done.signal()
        }
        thread.stackSize = stackBytes
        thread.start()
        done.wait()
        return room.withLock { $0 }
    }

    /// The room a closure has on a trial thread, and the thread's report.
    static func trialRoom(plainRoomAsked: Bool) throws -> (room: Int, report: ThreadReport?) {
        let context = ScenarioContext(parameters: ParameterValues([:], for: Quiet.self), seed: 1, profile: .linux)
        context.givesPlainThreadRoom.store(plainRoomAsked, ordering: .releasing)
        let executor = StrategySpec.thread(stackBytes: stackBytes).makeExecutor(context: context)
        let room = Mutex(0)
        try executor.perform {
            try PlainThreadRoom.call(PlainThreadRoom.Call {
                strain_stack_note()
                var here = 0
                strain_stack_noted(nil, &here, nil)
                room.withLock { $0 = here }
            })
        }
        return (room.withLock { $0 }, context.reports.first)
    }

    @Test func aThreadTrialsClosureHasThePlainThreadsRoomAndReportsTheSizeAskedFor() throws {
        let plain = Self.plainRoom()
        let trial = try Self.trialRoom(plainRoomAsked: true)
        #expect(plain > 400 << 10, "a plain thread's closure has most of its 512 KiB: \(plain)")
        #expect(abs(trial.room - plain) < 16, "trial \(trial.room) bytes below the closure, plain \(plain)")
        #expect(trial.report?.stackSizeBytes == Self.stackBytes, "\(String(describing: trial.report))")
        // Counted from where a plain thread's top would be: what its closure started below, not the 64 KiB more.
        if let high = trial.report?.stackHighWaterBytes { #expect(high < 32 << 10, "high water \(high)") }
    }

    @Test func aScenarioThatDoesNotAskKeepsTheHarnessFramesAboveItsWork() throws {
        let plain = Self.plainRoom()
        let trial = try Self.trialRoom(plainRoomAsked: false)
        #expect(trial.room < plain, "trial \(trial.room), plain \(plain): the harness's frames sit above the work")
        #expect(trial.report?.stackSizeBytes == Self.stackBytes)
    }
}
