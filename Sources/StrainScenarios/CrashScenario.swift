import Foundation
import StrainKit

/// Dies on purpose, to show what Strain records for a crash that is not a stack
/// overflow: a null dereference (SIGSEGV), abort() (SIGABRT), a Swift trap (SIGILL).
public struct CrashScenario: Scenario {
    public static let name = "crash"
    public static let summary = "fails on purpose (null dereference, abort, Swift trap, throw, hang, a silent lock-order deadlock): checks the harness's crash and timeout paths"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("kind", .choice(["null-dereference", "abort", "trap", "throw", "hang", "lock-order", "none"]), default: "null-dereference",
                      summary: "how the work fails; hang sleeps until the deadline; lock-order deadlocks two threads on two NSLocks without telling the heartbeat (only the parent's ptrace dump can explain it); none completes"),
    ]

    struct Thrown: Error, CustomStringConvertible {
        var description: String { "the crash scenario threw on purpose" }
    }

    let kind: String

    public init(parameters: ParameterValues) { kind = parameters.string("kind") }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let kind = kind
        return { executor in
            try executor.perform {
                switch kind {
                case "null-dereference": FaultInjection.nullDereference()
                case "abort": abort()
                case "trap": preconditionFailure("the crash scenario trapped on purpose")
                case "throw": throw Thrown()
                case "hang": while true { sleep(60) }
                case "lock-order": lockOrderDeadlock()
                default: break
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
