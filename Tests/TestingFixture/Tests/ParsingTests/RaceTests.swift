import Parsing
import StrainTesting
import Testing

/// Tallies from four threads at once: only a test binary built with ThreadSanitizer
/// (`swift test --sanitize=thread`) sees the race; a plain one warns that it did not look.
@Suite struct RaceTests {
    /// Fails on purpose in a sanitized build: `Tally.add` takes no lock.
    @Test func failsOnPurposeAnUnguardedTallyRaces() async {
        let tally = Tally()
        await expectNoRace(workers: 4) { _ in
            for _ in 0..<1_000 { tally.add() }
        }
    }

    @Test func aTallyUnderAnNSLockDoesNotRace() async {
        let tally = LockedTally()
        await expectNoRace(workers: 4) { _ in
            for _ in 0..<1_000 { tally.add() }
        }
    }

}
