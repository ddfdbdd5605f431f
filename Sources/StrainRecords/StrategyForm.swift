import Foundation

extension StrategySpec {
    /// How one strategy is written, read and explained, and where its threads come
    /// from: the one description each strategy has (`StrategySpec.Form.all`).
    ///
    /// Its syntax and help for `strain list`, its parsing with every limit and error
    /// message, its `description`, `ownThreads`, `withStack` and `usesDispatchPool` are
    /// derived from it, so a new strategy cannot miss a check: the limits belong to the
    /// kinds of its arguments, not to the strategy.
    package struct Form: Sendable {
        /// The name suites write (`thread-pool`).
        package let name: String
        /// The arguments, in the order they are written between the parentheses.
        package let arguments: [Argument]
        /// Where the strategy's threads come from.
        package let pool: Pool
        /// What the strategy does, for `strain list`; the help adds each argument's
        /// limits and the example.
        package let summary: String
        /// The argument values of the example that help and error messages suggest.
        package let example: Values
        /// The strategy with these argument values.
        package let make: @Sendable (Values) -> StrategySpec

        /// A strategy's description. A strategy that makes its own threads chooses their
        /// stack, so it takes a `.stack` argument; only such a strategy does.
        package init(name: String, arguments: [Argument] = [], pool: Pool, summary: String, example: Values = Values(),
                     make: @escaping @Sendable (Values) -> StrategySpec) {
            precondition((pool == .ownThreads) == arguments.contains(.stack),
                         "strategy '\(name)': a strategy makes its own threads exactly when it takes a stack argument")
            self.name = name
            self.arguments = arguments
            self.pool = pool
            self.summary = summary
            self.example = example
            self.make = make
        }
    }

    /// Where a strategy's threads come from.
    package enum Pool: Sendable {
        /// libdispatch's pool, whose thread cap differs between platforms (the
        /// portability verdict applies).
        case dispatch
        /// Threads the strategy makes itself, with the stack it chooses.
        case ownThreads
        /// Swift concurrency's cooperative pool.
        case cooperative
        /// The child's main thread.
        case mainThread
    }

    /// One kind of strategy argument: its range or choices, how it is written, read
    /// and explained, and what a wrong value is told.
    package enum Argument: Sendable, Equatable {
        /// A GCD quality of service; written without parentheses, the default.
        case qos(default: QualityOfServiceName)
        /// A Swift concurrency task priority; written without parentheses, the default.
        case priority(default: TaskPriorityName)
        /// How many threads the strategy makes, 1 to `maximumPoolThreads`.
        case threadCount
        /// The stack of each thread the strategy makes, `minimumStackBytes` to `maximumThreadStackBytes`.
        case stack
        /// `maxConcurrentOperationCount`, 1 to `maximumPoolThreads`.
        case width
    }

    /// The argument values of one strategy, one field per kind of argument: a form
    /// reads the fields of the arguments it declares and leaves the others alone.
    package struct Values: Hashable, Sendable {
        /// The `.qos` argument.
        package var qos: QualityOfServiceName
        /// The `.priority` argument.
        package var priority: TaskPriorityName
        /// The `.threadCount` argument.
        package var threadCount: Int
        /// The `.stack` argument, in bytes.
        package var stackBytes: Int
        /// The `.width` argument.
        package var width: Int

        /// Values for the arguments a form declares; the others keep a placeholder.
        package init(qos: QualityOfServiceName = .default, priority: TaskPriorityName = .medium, threadCount: Int = 1,
                     stackBytes: Int = StrategySpec.minimumStackBytes, width: Int = 1) {
            self.qos = qos
            self.priority = priority
            self.threadCount = threadCount
            self.stackBytes = stackBytes
            self.width = width
        }
    }
}

extension StrategySpec.Form {
    /// The form suites write with this name, if there is one.
    package static func named(_ name: String) -> StrategySpec.Form? {
        all.first { $0.name == name }
    }

    /// `thread-pool(n, stack)`: the name and the arguments' placeholders.
    package var syntax: String {
        arguments.isEmpty ? name : "\(name)(\(arguments.map(\.placeholder).joined(separator: ", ")))"
    }

    /// `thread-pool(64, 512KiB)`: what help and error messages suggest.
    package var exampleText: String { written(example) }

    /// The summary, each argument's range or choices, and the example, for `strain list`.
    package var help: String {
        guard !arguments.isEmpty else { return summary }
        return "\(summary); \(arguments.map(\.help).joined(separator: ", ")); e.g. \(exampleText)"
    }

    /// These values as suites write them; without parentheses when every argument is at its default.
    package func written(_ values: StrategySpec.Values) -> String {
        guard !arguments.allSatisfy({ $0.isDefault(in: values) }) else { return name }
        return "\(name)(\(arguments.map { $0.written(values) }.joined(separator: ", ")))"
    }

    /// What to write instead of `text`, which opens a parenthesis it does not close.
    /// In a `[a, b]` list a comma ends the item, so a strategy of two or more
    /// arguments must be quoted.
    var unclosedHint: String {
        switch arguments.count {
        case 0: "write \(name)"
        case 1: "write e.g. \(exampleText)"
        default: "in a [a, b] list a comma ends the item, so quote this strategy: \"\(exampleText)\""
        }
    }

    /// The strategy written `text`, from what it has between its parentheses (nil without them).
    func parse(_ argument: String?, in text: String) throws(StrategySpec.ParseError) -> StrategySpec {
        var values = StrategySpec.Values()
        guard !arguments.isEmpty else {
            guard argument == nil else { throw StrategySpec.ParseError(description: "'\(name)' takes no argument; write \(name)") }
            return make(values)
        }
        let needs = StrategySpec.ParseError(description: "'\(text)' needs \(Self.sentenceList(arguments.map(\.needs))); write e.g. \(exampleText)")
        guard let argument else {
            for kind in arguments {
                guard kind.setDefault(in: &values) else { throw needs }
            }
            return make(values)
        }
        let parts = arguments.count == 1
            ? [argument]
            : argument.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == arguments.count else { throw needs }
        for (kind, part) in zip(arguments, parts) {
            try kind.read(part, into: &values, in: text, example: exampleText)
        }
        return make(values)
    }

    /// `a`, `a and b`, `a, b and c`.
    private static func sentenceList(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }
}

extension StrategySpec.Argument {
    /// The name in the syntax (`stack` in `thread(stack)`).
    package var placeholder: String {
        switch self {
        case .qos: "qos"
        case .priority: "priority"
        case .threadCount: "n"
        case .stack: "stack"
        case .width: "width"
        }
    }

    /// The numbers the argument may take; nil for a choice of names.
    package var range: ClosedRange<Int>? {
        switch self {
        case .qos, .priority: nil
        case .threadCount, .width: 1...StrategySpec.maximumPoolThreads
        case .stack: StrategySpec.minimumStackBytes...StrategySpec.maximumThreadStackBytes
        }
    }

    /// The names the argument may take; nil for a number.
    package var choices: [String]? {
        switch self {
        case .qos: QualityOfServiceName.allCases.map(\.rawValue)
        case .priority: TaskPriorityName.allCases.map(\.rawValue)
        case .threadCount, .stack, .width: nil
        }
    }

    /// A number of this kind as suites write it (`512KiB`, `64`).
    package func written(number: Int) -> String {
        self == .stack ? ByteSize.exact(number) : "\(number)"
    }

    /// This argument's value in `values`, as suites write it.
    func written(_ values: StrategySpec.Values) -> String {
        switch self {
        case .qos: values.qos.rawValue
        case .priority: values.priority.rawValue
        case .threadCount: written(number: values.threadCount)
        case .stack: written(number: values.stackBytes)
        case .width: written(number: values.width)
        }
    }

    /// Whether `values` holds this argument's default, which is then left unwritten.
    func isDefault(in values: StrategySpec.Values) -> Bool {
        switch self {
        case .qos(let value): values.qos == value
        case .priority(let value): values.priority == value
        case .threadCount, .stack, .width: false
        }
    }

    /// Sets the default into `values`; false when the argument has none and must be written.
    func setDefault(in values: inout StrategySpec.Values) -> Bool {
        switch self {
        case .qos(let value): values.qos = value
        case .priority(let value): values.priority = value
        case .threadCount, .stack, .width: return false
        }
        return true
    }

    /// What a strategy written without this argument is told it needs.
    var needs: String {
        switch self {
        case .qos: "a QoS"
        case .priority: "a task priority"
        case .threadCount: "a thread count"
        case .stack: "a stack size"
        case .width: "a width \(rangeText) (maxConcurrentOperationCount)"
        }
    }

    /// `qos is one of …`, `n is from 1 to 4096`: the argument's limits for the help.
    var help: String {
        switch self {
        case .qos(let value): "qos is one of \(choices!.joined(separator: ", ")) (default: \(value.rawValue))"
        case .priority(let value): "priority is one of \(choices!.joined(separator: ", ")) (default: \(value.rawValue))"
        case .threadCount, .stack, .width: "\(placeholder) is \(rangeText)"
        }
    }

    /// `from 1 to 4096`, `from 32KiB to 1GiB`.
    private var rangeText: String {
        guard let range else { return "" }
        return "from \(written(number: range.lowerBound)) to \(written(number: range.upperBound))"
    }

    /// Reads `part`, this argument's text in the strategy `text`, into `values`; a
    /// wrong value is told its limits and `example`.
    func read(_ part: String, into values: inout StrategySpec.Values, in text: String, example: String) throws(StrategySpec.ParseError) {
        switch self {
        case .qos:
            guard let qos = QualityOfServiceName(rawValue: part) else {
                throw StrategySpec.ParseError(description: "unknown QoS '\(part)' in '\(text)'; use one of \(choices!.joined(separator: ", "))")
            }
            values.qos = qos
        case .priority:
            guard let priority = TaskPriorityName(rawValue: part) else {
                throw StrategySpec.ParseError(description: "unknown task priority '\(part)' in '\(text)'; use one of \(choices!.joined(separator: ", "))")
            }
            values.priority = priority
        case .threadCount:
            values.threadCount = try count(part, in: text, what: "a thread count \(rangeText)", example: example)
        case .width:
            values.width = try count(part, in: text, what: "a width \(rangeText) (maxConcurrentOperationCount)", example: example)
        case .stack:
            values.stackBytes = try stack(part, in: text)
        }
    }

    private func count(_ part: String, in text: String, what: String, example: String) throws(StrategySpec.ParseError) -> Int {
        guard let number = Int(part), range!.contains(number) else {
            throw StrategySpec.ParseError(description: "'\(part)' in '\(text)' is not \(what); write e.g. \(example)")
        }
        return number
    }

    private func stack(_ part: String, in text: String) throws(StrategySpec.ParseError) -> Int {
        let (low, high) = (range!.lowerBound, range!.upperBound)
        guard let bytes = ByteSize.parse(part) else {
            throw StrategySpec.ParseError(description: "'\(part)' in '\(text)' is not a stack size; write a size such as 512KiB, 1MiB or 8MiB")
        }
        guard bytes >= low else {
            throw StrategySpec.ParseError(description: "stack size \(part) in '\(text)' is under \(written(number: low)), too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use \(written(number: low)) or more")
        }
        guard bytes <= high else {
            throw StrategySpec.ParseError(description: "stack size \(part) in '\(text)' is over \(written(number: high)), which Foundation clamps; use \(written(number: high)) or less")
        }
        return bytes
    }
}
