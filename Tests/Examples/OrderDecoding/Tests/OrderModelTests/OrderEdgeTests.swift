import Dispatch
import Foundation
import OrderModel
import StrainTesting
import Testing

/// The order model at its edges, asked in the team's own `swift test`: each closure
/// runs as a Strain trial in a child of the test process.
@Suite struct OrderEdgeTests {
    static func archive(depth: Int) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: Order.nested(id: 1, depth: depth, width: 2), requiringSecureCoding: false)
    }

    static func unarchive(_ data: Data) throws -> Order? {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? Order
    }

    /// A saved order of 20 nested bundles opens on an iOS app's secondary thread.
    @Test func aSavedOrderOfTwentyBundlesOpensOnA512KiBThread() async throws {
        let data = try Self.archive(depth: 20)
        await expectCompletes(on: .thread(stackBytes: 512 << 10)) {
            guard try Self.unarchive(data)?.lineCount == 58 else { throw CocoaError(.coderReadCorrupt) }
        }
    }

    /// How deep bundles may nest before unarchiving overflows 512 KiB, pinned.
    @Test func bundlesNestAtLeastFortyDeepBeforeA512KiBThreadOverflows() async {
        let bisection = await deepestCompleting(in: 1...2_000, on: .thread(stackBytes: 512 << 10)) { depth in
            _ = try Self.unarchive(try Self.archive(depth: depth))
        }
        guard bisection.ran else { return }
        #expect((bisection.deepestCompleting ?? 0) >= 40, "\(bisection)")
    }

    /// Opening orders on eight GCD workers at once neither deadlocks nor starves the pool.
    @Test func ordersOpenedOnEightWorkersAtOnceDoNotStall() async throws {
        let data = try Self.archive(depth: 10)
        await expectNoStall(within: .seconds(2)) {
            DispatchQueue.concurrentPerform(iterations: 8) { _ in _ = try? Self.unarchive(data) }
        }
    }

    /// An order is immutable: four threads counting its lines at once do not race
    /// (checked under `swift test --sanitize=thread`).
    @Test func oneOrderReadByFourThreadsAtOnceDoesNotRace() async {
        let order = Order.nested(id: 1, depth: 30, width: 2)
        await expectNoRace(workers: 4) { _ in
            for _ in 0..<100 { _ = order.lineCount }
        }
    }

    /// Counting lines allocates at most about one block per line (a debug build gives
    /// `reduce` its closure's context: 999 of 1,040 allocations here); one more per
    /// line, a regression, fails it with the line that grew.
    @Test func countingTheLinesOfAThousandLineOrderStaysWithinItsAllocationBudget() async {
        let order = Order.nested(id: 1, depth: 334, width: 2)
        await expectAllocations(atMost: 1_200) {
            guard order.lineCount == 1_000 else { throw CocoaError(.coderReadCorrupt) }
        }
    }

    /// Counting a thousand lines stays within its instruction budget, counted by
    /// callgrind (a debug build: about 2.1 million instructions here); a change that
    /// makes it walk the lines twice fails it with the function that grew.
    @Test func countingTheLinesOfAThousandLineOrderStaysWithinItsInstructionBudget() async {
        let order = Order.nested(id: 1, depth: 334, width: 2)
        await expectInstructions(atMost: 3_000_000) {
            guard order.lineCount == 1_000 else { throw CocoaError(.coderReadCorrupt) }
        }
    }
}
