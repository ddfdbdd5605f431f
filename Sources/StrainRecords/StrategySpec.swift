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
    public static let catalog: [(syntax: String, summary: String)] = [
        ("gcd-global(qos)", "DispatchQueue.global(qos:); qos is one of \(QualityOfServiceName.allCases.map(\.rawValue).joined(separator: ", ")) (default: default)"),
        ("gcd-serial", "a private serial DispatchQueue"),
        ("gcd-concurrent", "a private concurrent DispatchQueue"),
        ("thread(stack)", "a new Thread with stackSize = stack for each piece of work, e.g. thread(512KiB)"),
        ("thread-queue(stack)", "one long-lived Thread with stackSize = stack, fed like a serial queue"),
        ("thread-pool(n, stack)", "a fixed pool of n Threads with stackSize = stack sharing one queue, e.g. thread-pool(64, 512KiB): a small, exact thread cap"),
        ("gcd-serial-queues", "each piece of work on a new private serial DispatchQueue (libdispatch's overcommit pool)"),
        ("task(priority)", "Swift concurrency: a detached Task per piece of work; priority is one of \(TaskPriorityName.allCases.map(\.rawValue).joined(separator: ", ")) (default: medium)"),
        ("main", "the child's main thread"),
        ("operation-queue(width)", "an OperationQueue with maxConcurrentOperationCount = width (1 to \(maximumPoolThreads)), an operation per piece of work; its threads are GCD's"),
        ("task-executor(n, stack)", "Swift concurrency on a TaskExecutor of n Threads with stackSize = stack, e.g. task-executor(2, 8MiB): a Task with that executor preference per piece of work"),
    ]

    /// The strategy as suites write it (`thread(512KiB)`).
    public var description: String {
        switch self {
        case .gcdGlobal(let qos): qos == .default ? "gcd-global" : "gcd-global(\(qos.rawValue))"
        case .gcdSerial: "gcd-serial"
        case .gcdConcurrent: "gcd-concurrent"
        case .thread(let bytes): "thread(\(ByteSize.exact(bytes)))"
        case .threadQueue(let bytes): "thread-queue(\(ByteSize.exact(bytes)))"
        case .threadPool(let count, let bytes): "thread-pool(\(count), \(ByteSize.exact(bytes)))"
        case .gcdSerialQueues: "gcd-serial-queues"
        case .task(let priority): priority == .medium ? "task" : "task(\(priority.rawValue))"
        case .main: "main"
        case .operationQueue(let width): "operation-queue(\(width))"
        case .taskExecutor(let count, let bytes): "task-executor(\(count), \(ByteSize.exact(bytes)))"
        }
    }

    /// The threads the strategy makes itself and the stack each gets (at most
    /// `count` at once); nil where the threads come from a runtime's pool (GCD,
    /// Swift concurrency's, the main thread). Every stack and pool limit is checked
    /// through this, so a new case cannot miss one: the switch has no `default`.
    public var ownThreads: (count: Int, stackBytes: Int)? {
        switch self {
        case .thread(let stack), .threadQueue(let stack): (1, stack)
        case .threadPool(let count, let stack), .taskExecutor(let count, let stack): (count, stack)
        case .gcdGlobal, .gcdSerial, .gcdConcurrent, .gcdSerialQueues, .task, .main, .operationQueue: nil
        }
    }

    /// The same strategy with its own threads' stack set to `bytes`, or nil where its
    /// threads' stack is not its own to choose.
    public func withStack(_ bytes: Int) -> StrategySpec? {
        switch self {
        case .thread: .thread(stackBytes: bytes)
        case .threadQueue: .threadQueue(stackBytes: bytes)
        case .threadPool(let count, _): .threadPool(count: count, stackBytes: bytes)
        case .taskExecutor(let count, _): .taskExecutor(count: count, stackBytes: bytes)
        case .gcdGlobal, .gcdSerial, .gcdConcurrent, .gcdSerialQueues, .task, .main, .operationQueue: nil
        }
    }

    /// The stack the strategy's threads are given, when the strategy sets it.
    public var chosenStackBytes: Int? { ownThreads?.stackBytes }

    /// Whether the strategy's threads come from libdispatch, whose thread cap
    /// differs between platforms (the portability verdict applies to these).
    public var usesDispatchPool: Bool {
        switch self {
        case .gcdGlobal, .gcdSerial, .gcdConcurrent, .gcdSerialQueues, .operationQueue: true
        case .thread, .threadQueue, .threadPool, .task, .main, .taskExecutor: false
        }
    }

    /// Why a strategy name did not parse, phrased for the person who wrote it.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        /// What is wrong and what to write instead.
        public var description: String
    }

    /// Parses `gcd-global`, `gcd-global(userInitiated)`, `thread(512KiB)`, ….
    public init(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var name = trimmed
        var argument: String?
        if let open = trimmed.firstIndex(of: "(") {
            guard trimmed.hasSuffix(")") else {
                if trimmed.hasPrefix("thread-pool") || trimmed.hasPrefix("task-executor") {
                    let example = trimmed.hasPrefix("thread-pool") ? "thread-pool(64, 512KiB)" : "task-executor(2, 8MiB)"
                    throw ParseError(description: "'\(trimmed)' opens a parenthesis it does not close; in a [a, b] list a comma ends the item, so quote this strategy: \"\(example)\"")
                }
                throw ParseError(description: "'\(trimmed)' opens a parenthesis it does not close; write e.g. thread(512KiB)")
            }
            name = String(trimmed[..<open])
            argument = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
                .trimmingCharacters(in: .whitespaces)
        }
        let valid = Self.catalog.map(\.syntax).joined(separator: ", ")
        switch name {
        case "gcd-global":
            guard let argument else { self = .gcdGlobal(.default); return }
            guard let qos = QualityOfServiceName(rawValue: argument) else {
                throw ParseError(description: "unknown QoS '\(argument)' in '\(trimmed)'; use one of \(QualityOfServiceName.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = .gcdGlobal(qos)
        case "gcd-serial", "gcd-concurrent", "gcd-serial-queues", "main":
            guard argument == nil else { throw ParseError(description: "'\(name)' takes no argument; write \(name)") }
            switch name {
            case "gcd-serial": self = .gcdSerial
            case "gcd-concurrent": self = .gcdConcurrent
            case "gcd-serial-queues": self = .gcdSerialQueues
            default: self = .main
            }
        case "task":
            guard let argument else { self = .task(.medium); return }
            guard let priority = TaskPriorityName(rawValue: argument) else {
                throw ParseError(description: "unknown task priority '\(argument)' in '\(trimmed)'; use one of \(TaskPriorityName.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = .task(priority)
        case "thread-pool":
            let parts = argument?.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            guard parts.count == 2 else {
                throw ParseError(description: "'\(trimmed)' needs a thread count and a stack size; write e.g. thread-pool(64, 512KiB)")
            }
            guard let count = Int(parts[0]), (1...Self.maximumPoolThreads).contains(count) else {
                throw ParseError(description: "'\(parts[0])' in '\(trimmed)' is not a thread count from 1 to \(Self.maximumPoolThreads); write e.g. thread-pool(64, 512KiB)")
            }
            self = .threadPool(count: count, stackBytes: try Self.threadStack(parts[1], in: trimmed))
        case "operation-queue":
            guard let argument, let width = Int(argument), (1...Self.maximumPoolThreads).contains(width) else {
                throw ParseError(description: "'\(trimmed)' needs a width from 1 to \(Self.maximumPoolThreads) (maxConcurrentOperationCount); write e.g. operation-queue(4)")
            }
            self = .operationQueue(width: width)
        case "task-executor":
            let parts = argument?.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            guard parts.count == 2 else {
                throw ParseError(description: "'\(trimmed)' needs a thread count and a stack size; write e.g. task-executor(2, 8MiB)")
            }
            guard let count = Int(parts[0]), (1...Self.maximumPoolThreads).contains(count) else {
                throw ParseError(description: "'\(parts[0])' in '\(trimmed)' is not a thread count from 1 to \(Self.maximumPoolThreads); write e.g. task-executor(2, 8MiB)")
            }
            self = .taskExecutor(count: count, stackBytes: try Self.threadStack(parts[1], in: trimmed))
        case "thread", "thread-queue":
            guard let argument else {
                throw ParseError(description: "'\(name)' needs a stack size; write e.g. \(name)(512KiB)")
            }
            let bytes = try Self.threadStack(argument, in: trimmed)
            self = name == "thread" ? .thread(stackBytes: bytes) : .threadQueue(stackBytes: bytes)
        default:
            throw ParseError(description: "unknown strategy '\(trimmed)'; valid strategies: \(valid)")
        }
    }

    private static func threadStack(_ argument: String, in text: String) throws(ParseError) -> Int {
        guard let bytes = ByteSize.parse(argument) else {
            throw ParseError(description: "'\(argument)' in '\(text)' is not a stack size; write a size such as 512KiB, 1MiB or 8MiB")
        }
        guard bytes >= minimumStackBytes else {
            throw ParseError(description: "stack size \(argument) in '\(text)' is under \(minimumStackBytes / 1024)KiB, too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use \(minimumStackBytes / 1024)KiB or more")
        }
        guard bytes <= maximumThreadStackBytes else {
            throw ParseError(description: "stack size \(argument) in '\(text)' is over 1GiB, which Foundation clamps; use 1GiB or less")
        }
        return bytes
    }

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
