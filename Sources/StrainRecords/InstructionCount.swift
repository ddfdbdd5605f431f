import Foundation

/// A trial's instruction count and where it came from, or why it has none.
public struct InstructionCount: Codable, Hashable, Sendable {
    /// What counted them: `callgrind` (Valgrind's, with the trial run under it), or `pmu`
    /// (a perf counter of user-space instructions per thread, in the trial run as usual).
    public var source: String
    /// Instructions the scenario's measured work retired; nil when not countable.
    public var instructions: Int?
    /// Why the trial has no count (`not countable: the work depends on timing`).
    public var notCountable: String?
    /// The functions with the most instructions, inclusive of what they called, most first;
    /// callgrind's alone (nil for `pmu`: a counter has no per-function costs).
    public var functions: [FunctionCost]?

    /// A count of `instructions` from `source`, or none, with the reason.
    public init(source: String, instructions: Int?, notCountable: String? = nil, functions: [FunctionCost]? = nil) {
        self.source = source
        self.instructions = instructions
        self.notCountable = notCountable
        self.functions = functions
    }
}

/// One function's instructions in a trial's measured work.
public struct FunctionCost: Codable, Hashable, Sendable {
    /// The function's name, demangled (`Link.init(from:)`), or its address.
    public var name: String
    /// Instructions in the function and everything it called.
    public var inclusive: Int
    /// Instructions in the function's own code.
    public var exclusive: Int
    /// The source file the function is defined in, from the debug information of the
    /// binary callgrind ran a stripped copy of; nil without it (a library's function,
    /// a binary without debug information, records before file:line).
    public var file: String?
    /// The line of the function's first instruction in `file`.
    public var line: Int?

    /// A function `name` with these costs, defined at `file`:`line` where known.
    public init(name: String, inclusive: Int, exclusive: Int, file: String? = nil, line: Int? = nil) {
        self.name = name
        self.inclusive = inclusive
        self.exclusive = exclusive
        self.file = file
        self.line = line
    }

    /// The folders of Strain's modules that run around a trial's work inside the trial
    /// (`Sources/StrainKit/…`, in a checkout of Strain or in the package's dependencies):
    /// the executors, the host, the probe, the helpers a scenario hands its work to, and
    /// the Swift Testing expectations' child. The built-in scenarios are work, not harness.
    package static let harnessModules: Set<Substring> = ["StrainKit", "StrainHost", "StrainWire", "StrainHelpers", "StrainTesting", "CStrainProbe", "CStrainPreload"]

    /// Whether `file` is one of Strain's harness sources: a `Sources` folder then one of `harnessModules`.
    package static func isHarness(_ file: String?) -> Bool {
        guard let file else { return false }
        let parts = file.split(separator: "/")
        return zip(parts, parts.dropFirst()).contains { $0 == "Sources" && harnessModules.contains($1) }
    }

    /// `main.swift:21`: the file's last component and the line, nil where either is unknown.
    public var place: String? {
        guard let file, let line, line > 0 else { return nil }
        return "\(file.split(separator: "/").last.map(String.init) ?? file):\(line)"
    }
}
