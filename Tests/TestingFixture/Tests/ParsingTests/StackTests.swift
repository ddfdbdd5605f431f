import Parsing
import StrainTesting
import Testing

/// The parser on a 512 KiB secondary thread, as an iOS app would run it.
@Suite struct StackTests {
    @Test func aShallowDocumentParsesOnA512KiBThread() async {
        let text = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        await expectCompletes(on: .thread(stackBytes: 512 << 10)) {
            precondition(depth(of: parse(text)) == 100)
        }
    }

    /// Fails on purpose: 50,000 levels do not fit 512 KiB, but do fit 64 MiB.
    @Test func failsOnPurposeADeepDocumentOverflowsA512KiBThread() async {
        let text = String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000)
        await expectCompletes(on: .thread(stackBytes: 512 << 10)) {
            _ = depth(of: parse(text))
        }
    }

    /// Fails on purpose: the recursion never ends, whatever the stack.
    @Test func failsOnPurposeARecursionWithoutEndOverflowsAnyStack() async {
        await expectCompletes(on: .gcdGlobal(.default), profile: .ios) {
            _ = countForever(0)
        }
    }

    @Test func theStackHighWaterOfAShallowParseIsMeasured() async {
        let verdict = await strainTrial(on: .thread(stackBytes: 512 << 10)) {
            _ = parse(String(repeating: "[", count: 50))
        }
        guard verdict.ran else { return }
        #expect(verdict.outcome == .completed)
        #expect((verdict.stackHighWaterBytes ?? 0) > 0)
        #expect(verdict.stackSizeBytes == 512 << 10)
    }
}

/// Allocation budgets, counted exactly in the child.
@Suite struct AllocationTests {
    @Test func labelsForAThousandElementsStayWithinTheirBudget() async {
        await expectAllocations(atMost: 1_100) {
            _ = labels(1_000, extra: false)
        }
    }

    /// Fails on purpose: one more allocation per element than the budget allows.
    @Test func failsOnPurposeAnExtraAllocationPerElementBreaksTheBudget() async {
        await expectAllocations(atMost: 1_100) {
            _ = labels(1_000, extra: true)
        }
    }
}
