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

    public init(address: UInt64, module: String? = nil, moduleOffset: UInt64? = nil, symbol: String? = nil, symbolOffset: UInt64? = nil) {
        self.address = address
        self.module = module
        self.moduleOffset = moduleOffset
        self.symbol = symbol
        self.symbolOffset = symbolOffset
    }

    /// `NSKeyedUnarchiver.decodeObject(forKey:) (libFoundation.so)`, or the address.
    public var displayName: String {
        let name = symbol ?? String(format: "0x%llx", address)
        guard let module else { return name }
        return "\(name) (\(module.split(separator: "/").last.map(String.init) ?? module))"
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

    public init(frames: [Frame], repetitions: Int, startIndex: Int) {
        self.frames = frames
        self.repetitions = repetitions
        self.startIndex = startIndex
    }
}

/// The stack of the thread that faulted, walked with libunwind from the signal
/// context in the child and symbolized in the parent.
public struct FaultTrace: Codable, Hashable, Sendable {
    public var signal: Int32
    public var signalName: String
    /// The faulting address (si_addr).
    public var faultAddress: UInt64
    /// Whether the fault lay in or just below the guard page of the thread's stack.
    public var isStackOverflow: Bool
    /// The faulting thread's stack, as recorded before the work ran; nil when the
    /// thread was not prepared by the harness.
    public var stackLow: UInt64?
    public var stackHigh: UInt64?
    public var guardSizeBytes: Int?
    /// Every frame on the stack, including those not kept.
    public var totalFrames: Int
    /// Frames between the kept head and tail that were counted but not kept.
    public var omittedFrames: Int
    /// The innermost frames, the fault first.
    public var firstFrames: [Frame]
    /// The outermost frames, the thread's entry last.
    public var lastFrames: [Frame]
    /// The repeating part, when the stack has one.
    public var cycle: RecursionCycle?
    /// The recursion depth the scenario had marked when the fault hit.
    public var markedDepth: Int?
    /// Nanoseconds the handler spent walking the stack.
    public var walkNanoseconds: Int
    /// Nanoseconds from the fault to the record's last frame and maps written.
    public var captureNanoseconds: Int?

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

    /// The faulting thread's stack size, when its bounds are known.
    public var stackSizeBytes: Int? {
        guard let stackLow, let stackHigh else { return nil }
        return Int(stackHigh - stackLow)
    }

    /// How far below the stack's low end the fault lay (negative: inside the stack).
    public var faultBelowStackBytes: Int? {
        guard let stackLow else { return nil }
        return Int(Int64(bitPattern: stackLow &- faultAddress))
    }
}
