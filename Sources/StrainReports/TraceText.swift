import Foundation
import StrainRecords

/// A fault trace as lines of text: the head, the recursion collapsed, the tail.
public enum TraceText {
    /// `SIGSEGV at 0x7f…, 2.1 KiB below the 512 KiB stack's low end; 1,532 frames`.
    public static func headline(_ trace: FaultTrace) -> String {
        var text = trace.signalName
        // Only a memory fault's si_addr is an address that was touched.
        let memoryFault = trace.signal == SIGSEGV || trace.signal == SIGBUS
        if memoryFault { text += " at \(String(format: "0x%llx", trace.faultAddress))" }
        if !memoryFault {
            if let size = trace.stackSizeBytes { text += " on a \(ByteSize.format(size)) stack" }
        } else if let below = trace.faultBelowStackBytes, abs(below) > 64 << 20 {
            text += ", far from the thread's stack"
        } else if let below = trace.faultBelowStackBytes, let size = trace.stackSizeBytes {
            let place = below >= 0 ? "\(Format.bytes(Double(below))) below" : "\(Format.bytes(Double(-below))) above"
            text += ", \(place) the low end of a \(ByteSize.format(size)) stack"
        } else if trace.stackLow == nil {
            text += " (thread not prepared by the harness: stack bounds unknown)"
        }
        text += "; \(Format.count(Double(trace.totalFrames))) frames"
        if let depth = trace.markedDepth { text += ", depth \(Format.count(Double(depth)))" }
        return text
    }

    /// `init(coder:) → decodeObject(forKey:) → … × 1,532`.
    public static func cycle(_ cycle: RecursionCycle) -> String {
        let names = cycle.frames.map { $0.symbol ?? String(format: "0x%llx", $0.address) }
        return names.joined(separator: " → ") + " × \(Format.count(Double(cycle.repetitions)))"
    }

    /// The whole trace, one frame a line, with the cycle collapsed.
    public static func lines(_ trace: FaultTrace, edge: Int = 8) -> [String] {
        var lines: [String] = []
        let cycleStart = trace.cycle?.startIndex ?? Int.max
        for (index, frame) in trace.firstFrames.prefix(min(edge, cycleStart)).enumerated() {
            lines.append("#\(index)  \(frame.displayName)")
        }
        if let cycle = trace.cycle {
            lines.append("… recursion from frame #\(cycle.startIndex): \(cycle.frames.count) frames repeated × \(Format.count(Double(cycle.repetitions))):")
            for frame in cycle.frames { lines.append("      \(frame.displayName)") }
        } else if trace.totalFrames > edge {
            lines.append("…")
        }
        let firstLast = trace.totalFrames - trace.lastFrames.count
        for (offset, frame) in trace.lastFrames.suffix(edge).enumerated() {
            let index = firstLast + trace.lastFrames.count - min(edge, trace.lastFrames.count) + offset
            lines.append("#\(index)  \(frame.displayName)")
        }
        return lines
    }
}
