/// One parameter a scenario takes.
public struct ParameterSpec: Sendable {
    /// What values the parameter takes.
    public enum Kind: Sendable {
        /// One of a fixed set of names.
        case choice([String])
        /// A whole number in a range.
        case integer(ClosedRange<Int>)
        /// A byte size such as `512KiB`, in a range of bytes.
        case byteSize(ClosedRange<Int>)
    }

    public var name: String
    public var summary: String
    public var kind: Kind
    /// The value used when a suite does not set the parameter.
    public var defaultValue: String

    public init(_ name: String, _ kind: Kind, default defaultValue: String, summary: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
    }

    /// `one of archive, unarchive`, `a whole number from 1 to 100000`.
    public var validValues: String {
        switch kind {
        case .choice(let names): "one of \(names.joined(separator: ", "))"
        case .integer(let range): "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .byteSize(let range): "a size from \(ByteSize.format(range.lowerBound)) to \(ByteSize.format(range.upperBound))"
        }
    }

    /// Nil when `value` is valid; otherwise what is wrong and what to write.
    public func problem(with value: String) -> String? {
        switch kind {
        case .choice(let names):
            return names.contains(value) ? nil : "'\(value)' is not a valid \(name); use \(validValues)"
        case .integer(let range):
            guard let number = Int(value), range.contains(number) else {
                return "'\(value)' is not a valid \(name); use \(validValues)"
            }
            return nil
        case .byteSize(let range):
            guard let bytes = ByteSize.parse(value), range.contains(bytes) else {
                return "'\(value)' is not a valid \(name); use \(validValues)"
            }
            return nil
        }
    }
}

/// A scenario's parameter values by name, every one present and valid.
public struct ParameterValues: Sendable, Hashable {
    public var values: [String: String]

    public init(_ values: [String: String]) { self.values = values }

    public func string(_ name: String) -> String {
        guard let value = values[name] else { preconditionFailure("parameter \(name) was not resolved") }
        return value
    }

    public func integer(_ name: String) -> Int {
        guard let value = Int(string(name)) else { preconditionFailure("parameter \(name) is not a whole number") }
        return value
    }

    public func byteSize(_ name: String) -> Int {
        guard let value = ByteSize.parse(string(name)) else { preconditionFailure("parameter \(name) is not a size") }
        return value
    }
}
