import Synchronization

/// One parameter a scenario takes, declared once with its type, valid values,
/// default and help, and read back typed in the scenario's `init(parameters:)`.
///
/// ```swift
/// struct DecodeOrders: Scenario {
///     static let depth = Parameter<Int>("depth", in: 1...100_000, default: 100, help: "levels of nested line items")
///     static let format = Parameter<OrderFormat>("format", default: .json, help: "how the orders are coded")
///     static let parameters: [any ParameterDeclaration] = [depth, format]
///
///     let depth: Int
///     let format: OrderFormat
///     init(parameters: ParameterValues) {
///         depth = parameters[Self.depth]
///         format = parameters[Self.format]
///     }
/// }
/// ```
///
/// A suite sets a parameter by its name; the runner checks every value against
/// the declaration before any trial starts, and checks that the scenario reads
/// only parameters it lists in ``Scenario/parameters``.
public struct Parameter<Value: Sendable>: ParameterDeclaration {
    /// The declaration as suites, `strain list` and `strain explain` see it.
    public let spec: ParameterSpec
    /// The value used when a suite does not set the parameter.
    public let defaultValue: Value
    let decode: @Sendable (String) -> Value?

    /// The name suites use (`depth`).
    public var name: String { spec.name }
}

extension Parameter where Value == Int {
    /// A whole number in `range`.
    public init(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int, help: String) {
        spec = ParameterSpec(name: name, kind: .integer(range), defaultValue: String(defaultValue), help: help)
        self.defaultValue = defaultValue
        decode = { Int($0) }
    }

    /// A byte size in `range`, written in suites as `512KiB`, `8MiB` or a number
    /// of bytes, and read back in bytes.
    public static func byteSize(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int, help: String) -> Parameter<Int> {
        Parameter(spec: ParameterSpec(name: name, kind: .byteSize(range), defaultValue: ByteSize.format(defaultValue), help: help),
                  defaultValue: defaultValue, decode: { ByteSize.parse($0) })
    }
}

extension Parameter where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of an enumeration's cases, written in suites as the case's raw value.
    ///
    /// - Parameters:
    ///   - name: the name suites use.
    ///   - defaultValue: the case used when a suite does not set the parameter.
    ///   - help: one line for `strain list` and `strain explain`.
    ///   - choices: the cases a suite may choose (all of them by default).
    public init(_ name: String, default defaultValue: Value, help: String, choices: [Value] = Array(Value.allCases)) {
        let names = choices.map(\.rawValue)
        spec = ParameterSpec(name: name, kind: .choice(names), defaultValue: defaultValue.rawValue, help: help)
        self.defaultValue = defaultValue
        decode = { text in names.contains(text) ? Value(rawValue: text) : nil }
    }
}

/// A parameter declaration of any value type, as ``Scenario/parameters`` lists them.
public protocol ParameterDeclaration: Sendable {
    /// The declaration's name, kind, default and help.
    var spec: ParameterSpec { get }
}

/// A parameter declaration without its value type: what suites, `strain list`
/// and `strain explain` work from.
public struct ParameterSpec: Sendable, Hashable {
    /// What values the parameter takes.
    public enum Kind: Sendable, Hashable {
        /// One of a fixed set of names.
        case choice([String])
        /// A whole number in a range.
        case integer(ClosedRange<Int>)
        /// A byte size such as `512KiB`, in a range of bytes.
        case byteSize(ClosedRange<Int>)
    }

    /// The name suites use.
    public let name: String
    /// What values it takes.
    public let kind: Kind
    /// The default as a suite would write it.
    public let defaultValue: String
    /// One line of help for `strain list` and `strain explain`.
    public let help: String

    package init(name: String, kind: Kind, defaultValue: String, help: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
    }

    /// The type's name for `strain explain`: `integer`, `byte size`, `choice`.
    public var typeName: String {
        switch kind {
        case .choice: "choice"
        case .integer: "integer"
        case .byteSize: "byte size"
        }
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
            return names.contains(value) ? nil : "'\(value)' is not a valid value for \(name); use \(validValues)"
        case .integer(let range):
            guard let number = Int(value), range.contains(number) else {
                return "'\(value)' is not a valid value for \(name); use \(validValues)"
            }
            return nil
        case .byteSize(let range):
            guard let bytes = ByteSize.parse(value), range.contains(bytes) else {
                return "'\(value)' is not a valid value for \(name); use \(validValues)"
            }
            return nil
        }
    }
}

/// A scenario's parameter values, every one the scenario declares present and
/// valid; read them typed with `parameters[Self.depth]`.
public struct ParameterValues: Sendable {
    /// The values by name, as the suite wrote them.
    package let values: [String: String]
    private let scenario: String
    private let declared: [String: ParameterSpec]
    /// Shared by the copies of these values, so every read is noted once.
    private let misreads = MisreadLog()

    /// The values `given` (by name, as a suite writes them) for `scenario`,
    /// with its defaults filling in the rest: how a test of yours creates a
    /// scenario as the runner would, then checks ``problems``.
    public init(_ given: [String: String], for scenario: any Scenario.Type) {
        var values = given
        for spec in scenario.parameterSpecs where values[spec.name] == nil { values[spec.name] = spec.defaultValue }
        self.values = values
        self.scenario = scenario.name
        declared = Dictionary(scenario.parameterSpecs.map { ($0.name, $0) }) { first, _ in first }
    }

    /// The value of `parameter`.
    ///
    /// Reading a parameter the scenario does not list in its `parameters` gives
    /// its default and is noted: the runner refuses the suite before any trial
    /// starts, naming the scenario and the parameter.
    public subscript<Value>(_ parameter: Parameter<Value>) -> Value {
        guard declared[parameter.name] == parameter.spec else {
            misreads.add(parameter.name)
            return parameter.defaultValue
        }
        guard let text = values[parameter.name], let value = parameter.decode(text) else {
            misreads.add(parameter.name)
            return parameter.defaultValue
        }
        return value
    }

    /// What the scenario read that it does not declare (or declares otherwise),
    /// each with the fix; empty when every read was of a declared parameter.
    public var problems: [String] {
        Array(Set(misreads.all)).sorted().map { name in
                if declared[name] != nil {
                    return "scenario '\(scenario)' reads parameter '\(name)' with a declaration other than the one it lists in `parameters`; read the declared `Parameter` itself"
                }
                let known = declared.keys.sorted()
                return "scenario '\(scenario)' reads parameter '\(name)', which it does not declare; add it to its `static var parameters`"
                + (known.isEmpty ? " (it declares none)" : " (it declares \(known.joined(separator: ", ")))")
        }
    }
}

/// The names of parameters read that were not declared.
private final class MisreadLog: Sendable {
    private let names = Mutex<[String]>([])

    func add(_ name: String) { names.withVisibleLock { $0.append(name) } }
    var all: [String] { names.withVisibleLock { $0 } }
}

/// The error a trial ends in when its scenario read a parameter it does not
/// declare (the runner refuses such a suite first; this catches a binary that
/// was built after the plan).
package struct UndeclaredParameterError: Error, CustomStringConvertible {
    package var problems: [String]
    package init(problems: [String]) { self.problems = problems }
    package var description: String { problems.joined(separator: "; ") }
}

extension Scenario {
    /// The declarations without their value types.
    package static var parameterSpecs: [ParameterSpec] { parameters.map(\.spec) }

    /// Creates the scenario from `given` values as the child will, and returns
    /// what it read that it does not declare.
    package static func undeclaredReads(_ given: [String: String]) -> [String] {
        let values = ParameterValues(given, for: self)
        _ = try? Self(parameters: values)
        return values.problems
    }
}
