/// How one trial ended. Every trial ends in exactly one outcome.
public struct TrialOutcome: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of ending, graded against a suite's expectations.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        /// The work ran to its end.
        case completed
        /// The scenario's work threw; `message` keeps the error's text.
        case threw
        /// The work ended but broke a stated invariant (wrong count, lost update).
        case invariantViolated
        /// A thread ran out of stack; the trial carries the trace.
        case stackOverflow
        /// The work touched an object from a queue or thread that does not own it;
        /// the trial carries each violation with both stacks.
        case confinementViolated
        /// ThreadSanitizer saw two threads touch the same memory without ordering,
        /// at least one of them writing; the trial carries each race with both stacks.
        case dataRace
        /// The child died of a signal that was not stack exhaustion.
        case crashed
        /// No progress while work was queued (watchdog).
        case starved
        /// Every worker blocked with nothing to wake them (watchdog).
        case deadlocked
        /// The parent killed the child at the trial's deadline.
        case timedOut
        /// The harness itself failed; never hidden, never expected.
        case harnessError
    }

    /// How the trial ended.
    public var kind: Kind
    /// The signal number, for `crashed` and `stackOverflow`.
    public var signal: Int32?
    /// The error's or the failure's text, for `threw`, `invariantViolated` and `harnessError`.
    public var message: String?

    /// An outcome of `kind`, with the signal and message when there are.
    public init(kind: Kind, signal: Int32? = nil, message: String? = nil) {
        self.kind = kind
        self.signal = signal
        self.message = message
    }

    /// A trial whose work returned.
    public static let completed = TrialOutcome(kind: .completed)

    /// `crashed(SIGSEGV)`, `stackOverflow`, `threw`: the kind, and the signal's name when there is one.
    public var description: String {
        if kind == .crashed, let signal { return "crashed(\(SignalName.of(signal)))" }
        return kind.rawValue
    }
}

/// Names of the signals the harness reports.
public enum SignalName {
    private static let names: [Int32: String] = [
        1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
        7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM",
        15: "SIGTERM", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 28: "SIGWINCH", 29: "SIGIO", 31: "SIGSYS",
    ]

    /// The signal numbers Linux has (1 to SIGRTMAX): a process can die of no other.
    public static let numbers: ClosedRange<Int32> = 1...64

    /// `SIGSEGV` for 11; `signal 42` for one without a name here.
    public static func of(_ signal: Int32) -> String { names[signal] ?? "signal \(signal)" }

    /// The number for a name such as `SIGSEGV` or `SEGV`, or nil.
    public static func number(_ name: String) -> Int32? {
        let upper = name.uppercased()
        let full = upper.hasPrefix("SIG") ? upper : "SIG" + upper
        return names.first { $0.value == full }?.key
    }
}
