import Dispatch
import Foundation
import StrainHelpers
import StrainKit

/// Objects that belong to one queue, as Core Data's managed objects belong to
/// their context's queue, touched from another.
///
/// The "context" is a serial queue; its notes are created on it and confined to
/// it by a `ConfinementChecker`. The work, on the trial's strategy, reads and
/// writes the notes inside `sync` blocks on the context's queue (the right way,
/// `performAndWait`), and in `violating` mode also reads a few titles directly
/// from its own thread, as code that logs a managed object's property off its
/// queue does. Each such access is recorded with its stack and the stack that
/// confined the note, and the trial ends `confinementViolated`.
///
/// `unchecked` does the same owner-side accesses on plain objects, so the two
/// modes' `accessNanoseconds` give the checker's cost when nothing is wrong.
struct ConfinementScenario: Scenario {
    static let name = "confinement"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "objects confined to a queue (as managed objects to their context) touched from another: each wrong-queue access recorded with both stacks; the checker's cost per access"
    static let accessNanoseconds = Metric<Double>.nanoseconds("accessNanoseconds", better: .lowerIsBetter, noise: .timing, summary: "one read or write of a note on its own queue")
    static let confinementViolations = Metric<Int>.count("confinementViolations", better: .lowerIsBetter, noise: .deterministic, summary: "accesses from the wrong queue or thread")
    static let metrics: [any MetricDeclaration] = [accessNanoseconds, confinementViolations]
    /// Whether the work keeps to the owner's queue.
    enum Mode: String, CaseIterable, Sendable { case confined, violating, unchecked }

    static let mode = Parameter<Mode>("mode", default: .violating,
                                      help: "confined: every access on the owner's queue; violating: a few reads from the work's own thread too; unchecked: plain objects, no checker (the cost baseline)")
    static let objects = Parameter<Int>("objects", in: 1...100_000, default: 100, help: "notes in the context")
    static let accesses = Parameter<Int>("accesses", in: 1...100_000_000, default: 1_000_000, help: "reads and writes on the owner's queue")
    static let violations = Parameter<Int>("violations", in: 1...100_000, default: 3, help: "reads from the wrong thread (violating mode)")
    static let parameters: [any ParameterDeclaration] = [mode, objects, accesses, violations]
    static let typicalOutcomes = [
        TypicalOutcome(.confinementViolated, because: "violating mode reads notes off their queue; each access is recorded with both stacks"),
        TypicalOutcome(.completed, because: "confined and unchecked modes keep to the owner's queue"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"], expect: [.confinementViolated])]

    let mode: Mode
    let objects: Int
    let accesses: Int
    let violations: Int

    /// Reads the mode and the counts.
    init(parameters: ParameterValues) {
        mode = parameters[Self.mode]
        objects = parameters[Self.objects]
        accesses = parameters[Self.accesses]
        violations = parameters[Self.violations]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let checker = ConfinementChecker(context: context)
        let owner = checker.owningQueue(label: "strain.confinement.context")
        let scenario = self
        switch mode {
        case .unchecked:
            let notes = owner.sync { (0..<objects).map { Note(title: "Note \($0)") } }
            let shared = Prepared(notes)
            return { executor in
                try executor.perform {
                    try context.unit {
                        let nanoseconds = owner.sync { scenario.touch(count: shared.value.count) { shared.value[$0].count += 1; return shared.value[$0].count } }
                        try scenario.finish(nanoseconds: nanoseconds, total: owner.sync { shared.value.reduce(0) { $0 + $1.count } }, context: context)
                    }
                }
            }
        case .confined, .violating:
            let notes = owner.sync { (0..<objects).map { makeNote($0, checker: checker, owner: owner) } }
            let violate = mode == .violating
            return { executor in
                try executor.perform {
                    try context.unit {
                        let nanoseconds = owner.sync {
                            scenario.touch(count: notes.count) { index in
                                notes[index].write("count") { $0.count += 1; return $0.count }
                            }
                        }
                        if violate {
                            // The bug: a property read off the context's queue, for a log line.
                            for index in 0..<scenario.violations {
                                _ = logTitle(of: notes[index % notes.count])
                            }
                        }
                        let total = owner.sync { notes.reduce(0) { sum, note in sum + note.read("count") { $0.count } } }
                        try scenario.finish(nanoseconds: nanoseconds, total: total, context: context)
                    }
                }
            }
        }
    }

    /// `accesses` writes spread over the notes, on the owner's queue; nanoseconds per access.
    func touch(count: Int, _ access: (Int) -> Int) -> Double {
        let started = MonotonicClock.nanoseconds
        var sink = 0
        var index = 0
        for _ in 0..<accesses {
            sink &+= access(index)
            index += 1
            if index == count { index = 0 }
        }
        let elapsed = MonotonicClock.nanoseconds - started
        withExtendedLifetime(sink) {}
        return Double(elapsed) / Double(accesses)
    }

    func finish(nanoseconds: Double, total: Int, context: ScenarioContext) throws {
        context.record(Self.accessNanoseconds, nanoseconds)
        try context.check(total == accesses, "the notes counted \(total) writes; the work made \(accesses)")
    }
}

/// A managed object's stand-in: a class with a title and a counter.
final class Note {
    var title: String
    var count = 0
    init(title: String) { self.title = title }
}

/// Creates a note on its context's queue and confines it there: the owner's stack.
@inline(never)
func makeNote(_ index: Int, checker: ConfinementChecker, owner: OwningQueue) -> Confined<Note> {
    checker.confine(Note(title: "Note \(index)"), to: owner, name: "Note")
}

/// Reads a note's title for a log line, from whatever thread calls it: the wrong access.
@inline(never)
func logTitle(of note: Confined<Note>) -> String {
    note.read("title") { $0.title }
}
