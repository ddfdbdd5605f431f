import Glibc
import StrainTesting
import Testing

/// The count is the closure's own: nothing of the harness around it.
@Suite struct ExactCountTests {
    @Test func anEmptyClosureCountsNoAllocation() async {
        let verdict = await expectAllocations(atMost: 0) {}
        #expect(verdict.allocations == 0)
    }

    @Test func oneMallocAndItsFreeCountOneAllocationOf48Bytes() async {
        let verdict = await expectAllocations(atMost: 1) {
            free(malloc(48))
        }
        #expect(verdict.allocations == 1)
        #expect(verdict.allocatedBytes == 48)
    }
}
