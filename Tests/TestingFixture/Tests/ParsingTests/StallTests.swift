import Dispatch
import Foundation
import Parsing
import StrainTesting
import Testing

/// Deadlocks and starved pools, judged from the threads alone: the library reports nothing.
@Suite struct StallTests {
    @Test func transfersTakingTheLocksInOneOrderNeverStall() async {
        await expectNoStall(within: .seconds(1)) {
            let ledger = Ledger()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                for _ in 0..<1_000 { ledger.transferInOrder(1, from: index) }
            }
            precondition(ledger.total == 200)
        }
    }

    /// Fails on purpose: two transfers in opposite directions each hold one lock.
    @Test func failsOnPurposeOppositeTransfersDeadlock() async {
        await expectNoStall(within: .seconds(1)) {
            let ledger = Ledger()
            let bothHoldOne = DispatchGroup()
            bothHoldOne.enter()
            bothHoldOne.enter()
            let meet: @Sendable () -> Void = {
                bothHoldOne.leave()
                bothHoldOne.wait()
            }
            let finished = DispatchSemaphore(value: 0)
            for payer in 0..<2 {
                Thread {
                    ledger.transfer(1, from: payer, meet: meet)
                    finished.signal()
                }.start()
            }
            finished.wait()
            finished.wait()
        }
    }

    @Test func aFewBlockingLookupsFinish() async {
        await expectNoStall(within: .seconds(1)) {
            fetchAll(1, blocking: true)
        }
    }

    /// Fails on purpose: 300 lookups block every thread the global queue's pool will
    /// ever have (255 here, 64 on Apple platforms), and the reply never starts.
    @Test func failsOnPurposeThreeHundredBlockingLookupsStarveThePool() async {
        await expectNoStall(within: .seconds(1)) {
            fetchAll(300, blocking: true)
        }
    }

    /// Fails on purpose: the same two transfers, while the closure polls for their end
    /// (a sleep with a timeout, so it is not itself stuck); the cycle is named all the same.
    @Test func failsOnPurposeOppositeTransfersDeadlockWhileTheClosurePolls() async {
        await expectNoStall(within: .seconds(1), timeout: .seconds(30)) {
            let ledger = Ledger()
            let bothHoldOne = DispatchGroup()
            bothHoldOne.enter()
            bothHoldOne.enter()
            let meet: @Sendable () -> Void = {
                bothHoldOne.leave()
                bothHoldOne.wait()
            }
            let finished = DispatchSemaphore(value: 0)
            for payer in 0..<2 {
                Thread {
                    ledger.transfer(1, from: payer, meet: meet)
                    finished.signal()
                }.start()
            }
            var ended = 0
            while ended < 2 {
                if finished.wait(timeout: .now()) == .success { ended += 1 } else { Thread.sleep(forTimeInterval: 0.05) }
            }
        }
    }
}
