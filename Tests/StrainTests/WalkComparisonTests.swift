import CStrainProbe
import CStrainTools
import Dispatch
import Foundation
import Testing

/// libunwind's cached fast trace (`unw_backtrace`) against the fault handler's
/// `unw_step` loop, frame by frame, on the same interrupted stack, raised or a real
/// overflow. The handler now walks with the fast trace where it can
/// (`strain_fault_walk.c`); `FaultWalkTests` checks the handler's own walk.
@Suite(.serialized, .timeLimit(.minutes(10))) struct WalkComparisonTests {
    static func compare(depth: Int) -> strain_walk_comparison {
        var result = strain_walk_comparison()
        let status = strain_walk_compare(depth, 1 << 18, &result)
        #expect(status == 0)
        return result
    }

    static func expectAgreement(_ result: strain_walk_comparison, depth: Int, _ kind: String) {
        #expect(result.first_mismatch == -1, "\(kind): the walks differ at frame \(result.first_mismatch) of \(result.compared)")
        #expect(result.compared == result.step_frames, "\(kind): every frame of the handler's walk was compared")
        #expect(result.step_frames > depth, "\(kind): \(result.step_frames) frames for \(depth) levels")
        #expect(result.fast_skipped >= 1, "\(kind): the fast trace starts in the handler, before the signal frame")
    }

    /// Runs `compare(depth:)` on a new thread with `stackBytes` of stack.
    static func onThread(stackBytes: Int, depth: Int) async -> strain_walk_comparison {
        await InProcessFaults.lock.withLock { await OffPool.run("walk comparison", stackBytes: stackBytes) { Self.compare(depth: depth) } }
    }

    @Test func bothWalksAgreeFrameByFrameOnAThreadWithALargeStack() async {
        Self.expectAgreement(await Self.onThread(stackBytes: 64 << 20, depth: 100_000), depth: 100_000, "Thread, 64 MiB")
    }

    @Test func bothWalksAgreeFrameByFrameFromARealOverflowAtTheGuardPage() async {
        // A real SIGSEGV at a 512 KiB thread's guard page, handled on the alternate stack.
        let result = await Self.onThread(stackBytes: 512 << 10, depth: -1)
        Self.expectAgreement(result, depth: 5_000, "overflow of a 512 KiB Thread")
    }

    @Test func bothWalksAgreeFrameByFrameOnAGCDWorker() async {
        let result = await InProcessFaults.lock.withLock { await OffPool.onGCDWorker { Self.compare(depth: 5_000) } }
        Self.expectAgreement(result, depth: 5_000, "GCD worker")
    }

    @Test func bothWalksAgreeFrameByFrameOnASwiftConcurrencyThread() async {
        let result = await InProcessFaults.lock.withLock { await Task.detached { Self.compare(depth: 5_000) }.value }
        Self.expectAgreement(result, depth: 5_000, "Task")
    }
}
