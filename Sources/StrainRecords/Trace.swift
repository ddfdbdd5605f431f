import Foundation

/// One symbolized stack frame.
public struct Frame: Codable, Hashable, Sendable {
    /// The instruction pointer in the child.
    public var address: UInt64
    /// The file the address lies in (`libFoundation.so`), when known.
    public var module: String?
    /// Offset of the address within that module's file mapping.
    public var moduleOffset: UInt64?
    /// The function's name, demangled.
    public var symbol: String?
    /// Offset of the address from the function's start.
    public var symbolOffset: UInt64?
    /// The source file of the call or fault in `symbol`, from the module's debug
    /// information (llvm-symbolizer); nil when the module has none.
    public var file: String?
    /// The line in `file`, from 1.
    public var line: Int?
    /// The column in `line`, from 1; nil when the debug information has none.
    public var column: Int?
    /// Functions the compiler inlined into `symbol` at this address, innermost
    /// (where the address really is) first; `file`/`line` is then where `symbol`
    /// called the outermost of them.
    public var inlined: [InlinedFrame]?

    /// A frame at `address`, named as far as the parent could.
    public init(address: UInt64, module: String? = nil, moduleOffset: UInt64? = nil, symbol: String? = nil, symbolOffset: UInt64? = nil,
                file: String? = nil, line: Int? = nil, column: Int? = nil, inlined: [InlinedFrame]? = nil) {
        self.address = address
        self.module = module
        self.moduleOffset = moduleOffset
        self.symbol = symbol
        self.symbolOffset = symbolOffset
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
    }

    /// Where this frame made its call: the innermost of its inlined functions as a frame of
    /// its own (its symbol and location, the frame's address and module), else the frame.
    /// A C++ thread's lambda inlined into `std::thread`'s invoker called from its own line.
    package var callSite: Frame {
        guard let innermost = inlined?.first else { return self }
        return Frame(address: address, module: module, moduleOffset: moduleOffset, symbol: innermost.symbol,
                     file: innermost.file, line: innermost.line, column: innermost.column)
    }

    /// The module's file name without its folder: `libFoundation.so`.
    public var moduleName: String? {
        module.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
    }

    /// `GraphModel.swift:172:22`, or nil without debug information.
    public var location: String? { SourceLocation.text(file: file, line: line, column: column) }

    /// `NSKeyedUnarchiver.decodeObject(forKey:) (libFoundation.so)`, or the address;
    /// `ChainNode.init(coder:) at GraphModel.swift:172:22 (strain)` with a source location.
    public var displayName: String {
        let name = symbol ?? String(format: "0x%llx", address)
        let place = location.map { " at \($0)" } ?? ""
        guard let moduleName else { return name + place }
        return "\(name)\(place) (\(moduleName))"
    }
}

/// A function the compiler inlined into a frame's function, with its own source location.
public struct InlinedFrame: Codable, Hashable, Sendable {
    /// The inlined function's name, demangled.
    public var symbol: String?
    /// The source file.
    public var file: String?
    /// The line, from 1.
    public var line: Int?
    /// The column, from 1.
    public var column: Int?

    /// An inlined frame at this source location.
    public init(symbol: String?, file: String?, line: Int?, column: Int?) {
        self.symbol = symbol
        self.file = file
        self.line = line
        self.column = column
    }

    /// `GraphModel.swift:172:22`, or nil without debug information.
    public var location: String? { SourceLocation.text(file: file, line: line, column: column) }

    /// `Array.append(_:) at ArrayShared.swift:12:5 [inlined]`.
    public var displayName: String {
        (symbol ?? "?") + (location.map { " at \($0)" } ?? "") + " [inlined]"
    }
}

/// How a trace's or dump's frames were given source locations, so a report can
/// say why a frame has none.
public struct SourceLocations: Codable, Hashable, Sendable {
    /// The llvm-symbolizer that resolved file:line, or nil when none was found
    /// (names then come from the ELF symbol tables only).
    public var symbolizer: String?
    /// Modules in the trace whose frames got no file:line (no debug information).
    public var modulesWithoutDebugInfo: [String]

    /// How file:line was resolved, and the modules without debug information.
    public init(symbolizer: String?, modulesWithoutDebugInfo: [String]) {
        self.symbolizer = symbolizer
        self.modulesWithoutDebugInfo = modulesWithoutDebugInfo
    }

    /// `no file:line for libc.so.6 (no debug information)`, or nil when every module had it.
    public var note: String? {
        guard symbolizer != nil else {
            return "no file:line: llvm-symbolizer was not found (next to swift or on PATH); names come from the ELF symbol tables"
        }
        guard !modulesWithoutDebugInfo.isEmpty else { return nil }
        return "no file:line for \(modulesWithoutDebugInfo.joined(separator: ", ")) (no debug information)"
    }
}

/// `File.swift:12:5`: the one spelling of a source location.
public enum SourceLocation {
    /// `File.swift:12:5`, `File.swift:12` or `File.swift`; nil without a file.
    public static func text(file: String?, line: Int?, column: Int?) -> String? {
        guard let file, !file.isEmpty, let line, line > 0 else { return nil }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        guard let column, column > 0 else { return "\(name):\(line)" }
        return "\(name):\(line):\(column)"
    }
}

/// A run of frames that repeats back to back: the recursion, collapsed.
public struct RecursionCycle: Codable, Hashable, Sendable {
    /// One period of the cycle, innermost frame first.
    public var frames: [Frame]
    /// How many times the period repeats on the stack.
    public var repetitions: Int
    /// Index, counted from the faulting frame, where the repetition starts.
    public var startIndex: Int
    /// Index of the first frame after the repetition on the caller's side: the
    /// frame that entered the recursion. The span `startIndex..<endIndex` holds
    /// `repetitions` whole periods and what is left of one more. Nil in records
    /// written before Strain kept it.
    public var endIndex: Int?

    /// A cycle of `frames` repeated `repetitions` times between these indices.
    public init(frames: [Frame], repetitions: Int, startIndex: Int, endIndex: Int? = nil) {
        self.frames = frames
        self.repetitions = repetitions
        self.startIndex = startIndex
        self.endIndex = endIndex
    }
}

/// The stack of the thread that faulted, walked with libunwind from the signal
/// context in the child and symbolized in the parent.
public struct FaultTrace: Codable, Hashable, Sendable {
    /// The signal's number.
    public var signal: Int32
    /// The signal's name (`SIGSEGV`).
    public var signalName: String
    /// The faulting address (si_addr).
    public var faultAddress: UInt64
    /// Whether the fault lay in or just below the guard page of the thread's stack.
    public var isStackOverflow: Bool
    /// The faulting thread's stack, as recorded before the work ran; nil when the
    /// thread was not prepared by the harness.
    public var stackLow: UInt64?
    /// See `stackLow`.
    public var stackHigh: UInt64?
    /// The guard area below the stack, in bytes.
    public var guardSizeBytes: Int?
    /// Every frame on the stack, including those not kept.
    public var totalFrames: Int
    /// Frames the trace lists nowhere: in none of `firstFrames`, `entryFrames` and
    /// `lastFrames`, and outside the cycle's span (which stands for all its frames).
    /// Records written before this counted only the frames the fault handler could
    /// not keep, and said 0 for a trace that listed 32 of 131,000 frames.
    public var omittedFrames: Int
    /// The innermost frames, the fault first.
    public var firstFrames: [Frame]
    /// The outermost frames, the thread's entry last.
    public var lastFrames: [Frame]
    /// Index of `lastFrames[0]` in the whole stack; nil in older records, where
    /// `lastFrames` ends the stack (`totalFrames - lastFrames.count`).
    public var lastFramesStartIndex: Int?
    /// The frames just outside the cycle on the caller's side, from
    /// `cycle.endIndex`, when they are not already among `lastFrames`.
    public var entryFrames: [Frame]?
    /// How file:line was resolved, and which modules had no debug information.
    public var sourceLocations: SourceLocations?
    /// The repeating part, when the stack has one.
    public var cycle: RecursionCycle?
    /// The recursion depth the scenario had marked when the fault hit.
    public var markedDepth: Int?
    /// Nanoseconds the handler spent walking the stack.
    public var walkNanoseconds: Int
    /// Nanoseconds from the fault to the record's last frame and maps written.
    public var captureNanoseconds: Int?
    /// True when the walk stopped before the thread's outermost frame (code without
    /// unwind information, a JIT's frames): `totalFrames` is then a lower bound.
    /// Absent in records from before it was recorded.
    public var walkStoppedShort: Bool?
    /// Which walk made the record: `fast` (libunwind's cached trace) or `step` (the
    /// `unw_step` loop). Absent in records from before the fast walk.
    public var walk: String?
    /// Why the fast walk did not make the record and the `unw_step` loop did
    /// (`buffer full`, `stopped short`, `thread not warmed`, …); absent when it did.
    public var walkFallback: String?
    /// The kernel's id of the thread that faulted; absent in records from before it was kept.
    public var threadID: Int?
    /// The name the program gave the thread that faulted (the program's own for its main thread).
    public var threadName: String?

    /// A trace described by these values.
    public init(
        signal: Int32, faultAddress: UInt64, isStackOverflow: Bool, stackLow: UInt64?, stackHigh: UInt64?,
        guardSizeBytes: Int?, totalFrames: Int, omittedFrames: Int, firstFrames: [Frame], lastFrames: [Frame],
        cycle: RecursionCycle?, markedDepth: Int?, walkNanoseconds: Int, captureNanoseconds: Int?
    ) {
        self.signal = signal
        self.signalName = SignalName.of(signal)
        self.faultAddress = faultAddress
        self.isStackOverflow = isStackOverflow
        self.stackLow = stackLow
        self.stackHigh = stackHigh
        self.guardSizeBytes = guardSizeBytes
        self.totalFrames = totalFrames
        self.omittedFrames = omittedFrames
        self.firstFrames = firstFrames
        self.lastFrames = lastFrames
        self.cycle = cycle
        self.markedDepth = markedDepth
        self.walkNanoseconds = walkNanoseconds
        self.captureNanoseconds = captureNanoseconds
    }

    /// Index of `lastFrames[0]` in the whole stack.
    public var lastStartIndex: Int { lastFramesStartIndex ?? max(0, totalFrames - lastFrames.count) }

    /// The faulting thread's stack size, when its bounds are known.
    /// Nil too for bounds that are swapped or further apart than an `Int` counts
    /// (a record out of range, which readers refuse before this is asked).
    public var stackSizeBytes: Int? {
        guard let stackLow, let stackHigh, stackHigh >= stackLow else { return nil }
        return Int(exactly: stackHigh - stackLow)
    }

    /// How far below the stack's low end the fault lay (negative: inside the
    /// stack); nil without bounds, or when the distance is more than an `Int` counts.
    public var faultBelowStackBytes: Int? {
        guard let stackLow else { return nil }
        if stackLow >= faultAddress { return Int(exactly: stackLow - faultAddress) }
        return Int(exactly: faultAddress - stackLow).map { -$0 }
    }
}
