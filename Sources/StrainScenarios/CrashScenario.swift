import Foundation
import StrainHelpers
import StrainKit

/// Dies on purpose, to show what Strain records for a crash that is not a stack
/// overflow: a null dereference (SIGSEGV), abort() (SIGABRT), a Swift trap (SIGILL).
struct CrashScenario: Scenario {
    static let name = "crash"
    static let summary = "fails on purpose (null dereference, abort, Swift trap, throw, hang, a silent lock-order deadlock): checks the harness's crash and timeout paths"
    /// How the work fails.
    enum Kind: String, CaseIterable, Sendable {
        case nullDereference = "null-dereference", abort, trap, `throw`, hang, lockOrder = "lock-order", none
    }

    static let kind = Parameter<Kind>("kind", default: .nullDereference,
                                      help: "how the work fails; hang sleeps until the deadline; lock-order deadlocks two threads on two NSLocks without telling the heartbeat (the watchdog names the cycle from the locks' owners); none completes")
    static let parameters: [any ParameterDeclaration] = [kind]
    static let typicalOutcomes = [
        TypicalOutcome(.crashed, because: "null-dereference, abort and trap end the child with a signal (SIGSEGV, SIGABRT, the trap's)"),
        TypicalOutcome(.threw, because: "throw throws from the work"),
        TypicalOutcome(.timedOut, because: "hang never finishes and never tells the heartbeat"),
        TypicalOutcome(.deadlocked, because: "lock-order's two threads wait on each other's locks, a cycle the watchdog names at the stall threshold"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"], expect: [.crashed])]

    struct Thrown: Error, CustomStringConvertible {
        var description: String { "the crash scenario threw on purpose" }
    }

    let kind: Kind

    /// Reads `kind`.
    init(parameters: ParameterValues) { kind = parameters[Self.kind] }

    func prepare(context: ScenarioContext) throws -> Workload {
        let kind = kind
        return { executor in
            try executor.perform {
                switch kind {
                case .nullDereference: FaultInjection.nullDereference()
                case .abort: abort()
                case .trap: preconditionFailure("the crash scenario trapped on purpose")
                case .throw: throw Thrown()
                case .hang: while true { sleep(60) }
                case .lockOrder: lockOrderDeadlock()
                case .none: break
                }
            }
        }
    }
}

/// Two threads take two locks in opposite orders, each once it holds its first:
/// neither ever gets its second. The caller waits for them for good.
func lockOrderDeadlock() {
    let first = NSLock()
    let second = NSLock()
    let holding = Countdown()
    let done = Countdown()
    for (mine, theirs) in [(first, second), (second, first)] {
        NamedThread.start("strain.lock-order") {
            mine.lock()
            holding.add()
            holding.wait(for: 2, seconds: nil)
            theirs.lock()
            done.add()
        }
    }
    done.wait(for: 2, seconds: nil)
}
