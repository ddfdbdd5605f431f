import Foundation

/// Where a scenario's work runs: a name from a suite, parsed and validated.
public enum StrategySpec: Hashable, Sendable, CustomStringConvertible, Codable {
    /// `DispatchQueue.global(qos:)`.
    case gcdGlobal(QualityOfServiceName)
    /// A private serial `DispatchQueue`.
    case gcdSerial
    /// A private concurrent `DispatchQueue`.
    case gcdConcurrent
    /// A new `Thread` with this `stackSize` for each piece of work.
    case thread(stackBytes: Int)
    /// One long-lived `Thread` with this `stackSize`, fed like a serial queue.
    case threadQueue(stackBytes: Int)
    /// A fixed pool of `count` threads with this `stackSize`, sharing one FIFO
    /// queue: a small, exact thread cap, such as GCD's 64 on Apple platforms.
    case threadPool(count: Int, stackBytes: Int)
    /// Each piece of work on a private serial `DispatchQueue` of its own: what
    /// code that makes a queue per object does; libdispatch's overcommit pool.
    case gcdSerialQueues
    /// Swift concurrency: a detached `Task` at this priority per piece of work.
    case task(TaskPriorityName)
    /// The child's main thread.
    case main
    /// An `OperationQueue` with `maxConcurrentOperationCount = width`, an operation per piece of work.
    case operationQueue(width: Int)
    /// Swift concurrency on a `TaskExecutor` backed by `count` threads with this stack:
    /// a `Task` with that executor preference per piece of work.
    case taskExecutor(count: Int, stackBytes: Int)

    /// The smallest stack any strategy's thread may have: the one floor that suites,
    /// bisect and records share. Foundation ignores `Thread.stackSize` under 16 KiB
    /// (8 MiB instead), and measured here a `noop` trial's pool worker uses 16 KiB
    /// before any scenario code runs, so 32 KiB is the least that leaves room.
    public static let minimumStackBytes = 32 * 1024
    /// `Thread.stackSize` above this is clamped.
    public static let maximumThreadStackBytes = 1 << 30
    /// The most threads a `thread-pool` may have.
    public static let maximumPoolThreads = 4096

    /// The strategy names with their help, for `strain list` and error messages.
    public static let catalog: [(syntax: String, summary: String)] = Form.all.map { ($0.syntax, $0.help) }

    /// This strategy's form and argument values: the one switch over the cases, from
    /// which its `description`, `ownThreads`, `withStack` and `usesDispatchPool` follow.
    /// No `default:`, so a new case must name its form here.
    package var formAndValues: (form: Form, values: Values) {
        switch self {
        case .gcdGlobal(let qos): (Form.gcdGlobal, Values(qos: qos))
        case .gcdSerial: (Form.gcdSerial, Values())
        case .gcdConcurrent: (Form.gcdConcurrent, Values())
        case .thread(let bytes): (Form.thread, Values(stackBytes: bytes))
        case .threadQueue(let bytes): (Form.threadQueue, Values(stackBytes: bytes))
        case .threadPool(let count, let bytes): (Form.threadPool, Values(threadCount: count, stackBytes: bytes))
        case .gcdSerialQueues: (Form.gcdSerialQueues, Values())
        case .task(let priority): (Form.task, Values(priority: priority))
        case .main: (Form.main, Values())
        case .operationQueue(let width): (Form.operationQueue, Values(width: width))
        case .taskExecutor(let count, let bytes): (Form.taskExecutor, Values(threadCount: count, stackBytes: bytes))
        }
    }

    /// The strategy as suites write it (`thread(512KiB)`).
    public var description: String {
        let (form, values) = formAndValues
        return form.written(values)
    }

    /// The threads the strategy makes itself and the stack each gets (at most
    /// `count` at once); nil where the threads come from a runtime's pool (GCD,
    /// Swift concurrency's, the main thread). Every stack and pool limit is checked
    /// through this; it follows from the strategy's form.
    public var ownThreads: (count: Int, stackBytes: Int)? {
        let (form, values) = formAndValues
        guard form.pool == .ownThreads else { return nil }
        return (form.arguments.contains(.threadCount) ? values.threadCount : 1, values.stackBytes)
    }

    /// The same strategy with its own threads' stack set to `bytes`, or nil where its
    /// threads' stack is not its own to choose.
    public func withStack(_ bytes: Int) -> StrategySpec? {
        let (form, values) = formAndValues
        guard form.pool == .ownThreads else { return nil }
        var changed = values
        changed.stackBytes = bytes
        return form.make(changed)
    }

    /// The stack the strategy's threads are given, when the strategy sets it.
    public var chosenStackBytes: Int? { ownThreads?.stackBytes }

    /// Whether the strategy's threads come from libdispatch, whose thread cap
    /// differs between platforms (the portability verdict applies to these).
    public var usesDispatchPool: Bool { formAndValues.form.pool == .dispatch }

    /// Why a strategy name did not parse, phrased for the person who wrote it.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        /// What is wrong and what to write instead.
        public var description: String
    }

    /// Parses `gcd-global`, `gcd-global(userInitiated)`, `thread(512KiB)`, ….
    public init(parsing text: String) throws(ParseError) {
        // Spaces and tabs only: Foundation's `.whitespaces` also takes a zero-width space
        // (U+200B), which would let `main\u{200B}` pass as `main`.
        let trimmed = text.trimmingCharacters(in: Self.blanks)
        var name = trimmed
        var argument: String?
        if let open = trimmed.firstIndex(of: "(") {
            name = String(trimmed[..<open])
            guard trimmed.hasSuffix(")") else {
                let hint = Form.named(name)?.unclosedHint ?? "write e.g. \(Form.thread.exampleText)"
                throw ParseError(description: "'\(trimmed)' opens a parenthesis it does not close; \(hint)")
            }
            argument = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
                .trimmingCharacters(in: Self.blanks)
        }
        guard let form = Form.named(name) else {
            throw ParseError(description: "unknown strategy '\(trimmed)'; valid strategies: \(Self.catalog.map(\.syntax).joined(separator: ", "))")
        }
        self = try form.parse(argument, in: trimmed)
    }

    /// What a strategy's text may have around it and its argument: spaces and tabs.
    static let blanks = CharacterSet(charactersIn: " \t")

    /// Decodes a strategy from its suite syntax.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Encodes the strategy as its suite syntax.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The strategies' descriptions. A new strategy is its case in `StrategySpec`, its form
/// here and its entry in `all`, its line in `formAndValues`, and its executor in
/// StrainKit's `StrategyExecutor.swift`; its syntax, help, parsing, limits, errors and
/// pool follow, and `StrategyCatalogTests` checks them without a new line.
extension StrategySpec.Form {
    /// Every strategy, in the order `strain list` shows them.
    package static let all: [StrategySpec.Form] = [
        .gcdGlobal, .gcdSerial, .gcdConcurrent, .thread, .threadQueue, .threadPool, .gcdSerialQueues, .task, .main, .operationQueue, .taskExecutor,
    ]

    static let gcdGlobal = Self(name: "gcd-global", arguments: [.qos(default: .default)], pool: .dispatch,
                                summary: "DispatchQueue.global(qos:)", example: .init(qos: .userInitiated)) { .gcdGlobal($0.qos) }
    static let gcdSerial = Self(name: "gcd-serial", pool: .dispatch, summary: "a private serial DispatchQueue") { _ in .gcdSerial }
    static let gcdConcurrent = Self(name: "gcd-concurrent", pool: .dispatch, summary: "a private concurrent DispatchQueue") { _ in .gcdConcurrent }
    static let thread = Self(name: "thread", arguments: [.stack], pool: .ownThreads,
                             summary: "a new Thread with stackSize = stack for each piece of work",
                             example: .init(stackBytes: 512 << 10)) { .thread(stackBytes: $0.stackBytes) }
    static let threadQueue = Self(name: "thread-queue", arguments: [.stack], pool: .ownThreads,
                                  summary: "one long-lived Thread with stackSize = stack, fed like a serial queue",
                                  example: .init(stackBytes: 512 << 10)) { .threadQueue(stackBytes: $0.stackBytes) }
    static let threadPool = Self(name: "thread-pool", arguments: [.threadCount, .stack], pool: .ownThreads,
                                 summary: "a fixed pool of n Threads with stackSize = stack sharing one queue: a small, exact thread cap",
                                 example: .init(threadCount: 64, stackBytes: 512 << 10)) { .threadPool(count: $0.threadCount, stackBytes: $0.stackBytes) }
    static let gcdSerialQueues = Self(name: "gcd-serial-queues", pool: .dispatch,
                                      summary: "each piece of work on a new private serial DispatchQueue (libdispatch's overcommit pool)") { _ in .gcdSerialQueues }
    static let task = Self(name: "task", arguments: [.priority(default: .medium)], pool: .cooperative,
                           summary: "Swift concurrency: a detached Task per piece of work", example: .init(priority: .high)) { .task($0.priority) }
    static let main = Self(name: "main", pool: .mainThread, summary: "the child's main thread") { _ in .main }
    static let operationQueue = Self(name: "operation-queue", arguments: [.width], pool: .dispatch,
                                     summary: "an OperationQueue with maxConcurrentOperationCount = width, an operation per piece of work; its threads are GCD's",
                                     example: .init(width: 4)) { .operationQueue(width: $0.width) }
    static let taskExecutor = Self(name: "task-executor", arguments: [.threadCount, .stack], pool: .ownThreads,
                                   summary: "Swift concurrency on a TaskExecutor of n Threads with stackSize = stack: a Task with that executor preference per piece of work",
                                   example: .init(threadCount: 2, stackBytes: 8 << 20)) { .taskExecutor(count: $0.threadCount, stackBytes: $0.stackBytes) }
}

/// Swift concurrency's task priorities, by the names suites use.
public enum TaskPriorityName: String, Codable, Hashable, Sendable, CaseIterable {
    /// The priorities, as suites write them.
    case background, utility, low, medium, high, userInitiated
}

/// GCD's quality-of-service classes, by the names suites use.
public enum QualityOfServiceName: String, Codable, Hashable, Sendable, CaseIterable {
    /// The classes, as suites write them.
    case background, utility, `default`, userInitiated, userInteractive
}
