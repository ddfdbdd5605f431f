import Glibc
import StrainTesting
import Testing

/// What an expectation costs over calling its closure directly: each pair is timed
/// from outside, one test per process (the README's figures, by `farm-bench`).
@Suite struct CostTests {
    @Test func aNoOpCalledDirectly() {
        noOp()
    }

    @Test func aNoOpAsAnExpectation() async {
        await expectCompletes { noOp() }
    }

    @Test func tenMillisecondsCalledDirectly() {
        usleep(10_000)
    }

    @Test func tenMillisecondsAsAnExpectation() async {
        await expectCompletes { usleep(10_000) }
    }
}

@inline(never)
func noOp() {}
