import StrainTesting
import Testing
import Parsing

/// Instruction budgets, counted by callgrind in the expectation's child.
@Suite struct InstructionTests {
    static let kilobytes = [UInt8](repeating: 7, count: 16 << 10)

    @Test func oneChecksumPassStaysWithinItsInstructionBudget() async {
        await expectInstructions(atMost: 20_000_000) {
            _ = checksum(Self.kilobytes, rounds: 1)
        }
    }

    /// Fails on purpose: a second pass over the bytes, the growth named at its function.
    @Test func failsOnPurposeASecondChecksumPassBreaksTheInstructionBudget() async {
        await expectInstructions(atMost: 20_000_000) {
            _ = checksum(Self.kilobytes, rounds: 2)
        }
    }

    /// The same closure counted twice, in two children, gives the same count.
    @Test func theSameWorkCountsTheSameInstructionsTwice() async {
        let first = await expectInstructions(atMost: 20_000_000, "first") { _ = checksum(Self.kilobytes, rounds: 1) }
        let second = await expectInstructions(atMost: 20_000_000, "second") { _ = checksum(Self.kilobytes, rounds: 1) }
        guard let a = first.instructions, let b = second.instructions else { return }
        #expect(abs(a - b) <= max(20_000, a / 500), "\(a) and \(b) instructions")
    }
}
