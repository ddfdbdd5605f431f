import Foundation

/// One outcome a suite accepts: a kind, and for `crashed` optionally the signal.
public struct ExpectedOutcome: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The outcome accepted.
    public var kind: TrialOutcome.Kind
    /// For `crashed`: the signal it must be, or nil for any.
    public var signal: Int32?

    /// Accepts `kind` (and for `crashed`, `signal`).
    public init(kind: TrialOutcome.Kind, signal: Int32? = nil) {
        self.kind = kind
        self.signal = signal
    }

    /// Parses `completed`, `stackOverflow`, `crashed`, `crashed(SIGSEGV)` or `crashed(11)`
    /// (a signal Linux has: 1 to 64).
    public init?(parsing text: String) {
        var name = text.trimmingCharacters(in: .whitespaces)
        var signal: Int32?
        if let open = name.firstIndex(of: "("), name.hasSuffix(")") {
            let inner = String(name[name.index(after: open)..<name.index(before: name.endIndex)])
            guard let number = SignalName.number(inner) ?? Int32(inner), SignalName.numbers.contains(number) else { return nil }
            signal = number
            name = String(name[..<open])
        }
        guard let kind = TrialOutcome.Kind(rawValue: name) else { return nil }
        if signal != nil, kind != .crashed { return nil }
        self.init(kind: kind, signal: signal)
    }

    /// Whether `outcome` is one this expectation accepts.
    public func accepts(_ outcome: TrialOutcome) -> Bool {
        guard outcome.kind == kind else { return false }
        guard let signal else { return true }
        return outcome.signal == signal
    }

    /// `crashed(SIGSEGV)`, `stackOverflow`: as suites write it.
    public var description: String {
        if let signal { return "\(kind.rawValue)(\(SignalName.of(signal)))" }
        return kind.rawValue
    }
}
