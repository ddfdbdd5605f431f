import Foundation
import StrainTesting
import Testing

/// A closure that never returns, for the interrupted run of StrainTestingTests:
/// enabled only where FIXTURE_HANG is set (its re-run child inherits it).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["FIXTURE_HANG"] != nil)) struct HangTests {
    @Test func aClosureThatNeverReturns() async {
        await expectCompletes(timeout: .seconds(300)) {
            while true { sleep(60) }
        }
    }
}

/// A counted closure that never returns, for the interrupted counted run of
/// StrainTestingTests: its child runs under callgrind. Enabled only where FIXTURE_HANG is set.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["FIXTURE_HANG"] != nil)) struct NeverEndingCountTests {
    @Test func aCountedClosureThatNeverReturns() async {
        await expectInstructions(atMost: 1, timeout: .seconds(300)) {
            while true { sleep(60) }
        }
    }
}
