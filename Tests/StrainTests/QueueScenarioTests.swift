import Foundation
import StrainKit
import StrainRecords
import Testing

/// `queue-flood` and `confinement` in real children: outcomes and counts, never timings.
@Suite(.serialized, .timeLimit(.minutes(10))) struct QueueScenarioTests {
    @Test func aProgressFloodDeliversEveryUpdateAndTheGranularityFixDeliversAHundred() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: flood
        timeout: 60s
        runs:
          - scenario: queue-flood
            parameters: {items: 20000, progress: [every-item, every-percent]}
            strategies: [gcd-global, operation-queue(1)]
        """, timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trials = try #require(run).trials
        #expect(trials.count == 4)
        for trial in trials {
            #expect(trial.outcome.kind == .completed, "\(trial.id): \(trial.outcome)")
            let custom = trial.metrics.custom
            let everyItem = trial.key[parameter: "progress"] == "every-item"
            #expect(custom["progressUpdates"] == (everyItem ? 20000 : 100), "\(trial.id)")
            for metric in ["baselineImportSeconds", "importSeconds", "slowdown", "totalSeconds", "unrelatedJobLatencySeconds", "cancelSeconds", "cancelledAtItem"] {
                #expect(custom[metric] != nil, "\(trial.id) records \(metric)")
            }
        }
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match the schema: \(schema.output)")
    }

    @Test func aReadOffTheOwningQueueEndsConfinementViolatedWithTheAccessAndTheOwnerStacks() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: confinement
        runs:
          - scenario: confinement
            parameters: {mode: violating, accesses: 1000, violations: 5}
            strategies: [thread(512KiB), "task-executor(1, 512KiB)"]
            expect: confinementViolated
          - scenario: confinement
            parameters: {mode: [confined, unchecked], accesses: 1000}
            strategies: [gcd-global]
        """, timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        for strategy in ["thread(512KiB)", "task-executor(1, 512KiB)"] {
            let trial = try #require(record.trials.first { $0.strategy.description == strategy })
            #expect(trial.outcome.kind == .confinementViolated, "\(strategy): \(trial.outcome)")
            #expect(trial.outcome.message?.contains("Note.title (read)") == true, "\(trial.outcome.message ?? "")")
            let violations = try #require(trial.confinementViolations)
            #expect(violations.count == 1, "five reads from one call site are one record")
            let violation = try #require(violations.first)
            #expect(violation.count == 5)
            #expect(violation.owner == "queue strain.confinement.context")
            #expect(violation.accessStack.first?.symbol == "logTitle(of:)", "the access stack starts at the scenario's frame: \(violation.accessStack.prefix(3).map(\.symbol))")
            #expect(violation.ownerStack.first?.symbol?.hasPrefix("makeNote") == true, "the owner stack is where the note was confined: \(violation.ownerStack.prefix(3).map(\.symbol))")
            #expect(violation.ownerStack.contains { $0.symbol?.contains("OwningQueue.sync") == true })
            #expect(trial.metrics.custom["confinementViolations"] == 5)
        }
        for trial in record.trials where trial.strategy.description == "gcd-global" {
            #expect(trial.outcome.kind == .completed, "\(trial.id): \(trial.outcome)")
            #expect(trial.confinementViolations == nil)
            #expect(trial.metrics.custom["accessNanoseconds"] != nil)
        }
        #expect(result.stdout.contains("Confinement violations"))
        let summary = try String(contentsOfFile: (out as NSString).appendingPathComponent("summary.md"), encoding: .utf8)
        #expect(summary.contains("## Confinement violations"))
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match the schema: \(schema.output)")
    }

    @Test func theCheckerTellsItsOwnQueueFromEveryOtherThreadInProcess() async {
        let log = ConfinementLog()
        let checker = ConfinementChecker(log: log)
        let owner = checker.owningQueue(label: "test.owner")
        let other = checker.owningQueue(label: "test.other")
        // A private serial queue with no other work runs each sync block at once.
        let value = owner.sync { checker.confine([1, 2, 3], to: owner, name: "Numbers") } // off the pool: an idle serial queue, at once
        #expect(owner.sync { value.read("count") { $0.count } } == 3) // off the pool: an idle serial queue, at once
        owner.sync { value.write("append") { $0.append(4) } } // off the pool: an idle serial queue, at once
        #expect(log.total == 0, "accesses inside the owner's sync are fine")
        _ = other.sync { value.read("count") { $0.count } } // off the pool: an idle serial queue, at once
        _ = value.read("first") { $0.first }
        owner.sync { other.sync { _ = value.read("nested") { $0.last } } } // off the pool: idle serial queues, at once
        #expect(log.total == 3, "another owning queue, no queue at all, and a queue nested inside the owner's block are all wrong")
        #expect(Set(log.violations.map(\.access)) == ["count (read)", "first (read)", "nested (read)"])
        // Confined to a thread of its own, which then waits for a GCD worker's read: the
        // worker is another thread (a task's thread, free while it awaits, could be reused
        // as the worker, and its read would be the owner's).
        let before = await OffPool.run("confining thread") { () -> Int in
            let mine = checker.confineToCurrentThread("thread-owned")
            _ = mine.read("self") { $0 }
            let before = log.total
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = mine.read("self") { $0 }
                done.signal()
            }
            done.wait() // off the pool: inside OffPool.run
            return before
        }
        #expect(before == 3)
        #expect(log.total == 4, "a thread-confined value read from a GCD worker")
    }
}
