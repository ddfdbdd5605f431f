import Foundation
import StrainRecords

/// A fault trace laid out once for every format: the frames from the fault,
/// the recursion folded into one period and its count, the frame that entered
/// it, the thread's outermost frames, and a marker with a count for every
/// stretch not shown. The frames shown, the markers and the cycle's span add up
/// to the trace's `totalFrames`.
package struct TraceLayout: Sendable {
    package enum Part: Sendable {
        /// A frame at its index in the whole stack; `isEntry` for the first frame
        /// outside the recursion on the caller's side.
        case frame(index: Int, Frame, isEntry: Bool)
        /// `count` frames from `from` that the record does not keep.
        case skipped(from: Int, count: Int)
        /// The recursion: `count` frames from `from`, `cycle.repetitions` whole periods.
        case cycle(RecursionCycle, from: Int, count: Int)
    }

    package var parts: [Part]

    package init(_ trace: FaultTrace) {
        var parts: [Part] = []
        var position = 0
        let cycleStart = trace.cycle?.startIndex ?? Int.max
        let entryIndex = trace.cycle?.endIndex
        func skip(to index: Int) {
            if index > position { parts.append(.skipped(from: position, count: index - position)) }
            position = max(position, index)
        }
        func add(_ frames: [Frame], from start: Int) {
            for (offset, frame) in frames.enumerated() {
                let index = start + offset
                guard index >= position, index < trace.totalFrames else { continue }
                skip(to: index)
                parts.append(.frame(index: index, frame, isEntry: index == entryIndex))
                position = index + 1
            }
        }
        add(Array(trace.firstFrames.prefix(max(0, min(cycleStart, trace.firstFrames.count)))), from: 0)
        if let cycle = trace.cycle {
            skip(to: cycle.startIndex)
            // Records before Strain kept the cycle's end: it ran at most to the kept tail.
            let end = min(trace.totalFrames, cycle.endIndex ?? max(cycle.startIndex + cycle.frames.count * cycle.repetitions, trace.lastStartIndex))
            parts.append(.cycle(cycle, from: cycle.startIndex, count: max(0, end - cycle.startIndex)))
            position = max(position, end)
            if let entry = trace.entryFrames, let entryIndex { add(entry, from: entryIndex) }
        }
        add(trace.lastFrames, from: trace.lastStartIndex)
        skip(to: trace.totalFrames)
        self.parts = parts
    }

    /// The first kept frame after `index` that has a source location: on the
    /// caller's side of a runtime's frames, the user's code.
    package func firstLocated(after index: Int) -> (index: Int, frame: Frame)? {
        for case let .frame(at, frame, _) in parts where at > index && frame.location != nil { return (at, frame) }
        return nil
    }

    /// The frame that entered the recursion, when it is kept.
    package var entry: (index: Int, frame: Frame)? {
        for case let .frame(index, frame, true) in parts { return (index, frame) }
        return nil
    }
}

/// A fault trace as lines of text: the head, the recursion collapsed, the tail.
package enum TraceText {
    /// `SIGSEGV at 0x7f…, 2.1 KiB below the 512 KiB stack's low end; 1,532 frames`.
    package static func headline(_ trace: FaultTrace) -> String {
        var text = trace.signalName
        // Only a memory fault's si_addr is an address that was touched.
        let memoryFault = trace.signal == SIGSEGV || trace.signal == SIGBUS
        if memoryFault { text += " at \(String(format: "0x%llx", trace.faultAddress))" }
        if !memoryFault {
            if let size = trace.stackSizeBytes { text += " on \(ByteSize.spoken(size)) stack" }
        } else if trace.stackLow != nil, (trace.faultBelowStackBytes?.magnitude ?? .max) > 64 << 20 {
            text += ", far from the thread's stack"
        } else if let below = trace.faultBelowStackBytes, let size = trace.stackSizeBytes {
            let place = below >= 0 ? "\(Format.bytes(Double(below))) below" : "\(Format.bytes(Double(-below))) above"
            text += ", \(place) the low end of \(ByteSize.spoken(size)) stack"
        } else if trace.stackLow == nil {
            text += " (thread not prepared by the harness: stack bounds unknown)"
        }
        if trace.walkStoppedShort == true {
            text += "; at least \(Format.count(Double(trace.totalFrames))) frames (the unwinder stopped short, in code without unwind information or frames it could not read)"
        } else {
            text += "; \(Format.count(Double(trace.totalFrames))) frames"
        }
        if let depth = trace.markedDepth { text += ", depth \(Format.count(Double(depth)))" }
        return text
    }

    /// `init(coder:) at GraphModel.swift:172:22 → decodeObject(forKey:) → … × 1,532`:
    /// each frame's source location when it has one.
    package static func cycle(_ cycle: RecursionCycle) -> String {
        let names = cycle.frames.map { frame in (frame.symbol ?? String(format: "0x%llx", frame.address)) + (frame.location.map { " at \($0)" } ?? "") }
        return names.joined(separator: " → ") + " × \(Format.count(Double(cycle.repetitions)))"
    }

    /// `⟳ a cycle of 5 frames × 786 (frames #14–#3,945)`.
    package static func cycleMarker(_ cycle: RecursionCycle, from: Int, count: Int) -> String {
        let noun = cycle.frames.count == 1 ? "1 frame" : "\(cycle.frames.count) frames"
        let span = count > 0 ? " (frames \(frameNumber(from))–\(frameNumber(from + count - 1)))" : ""
        return "⟳ a cycle of \(noun) × \(Format.count(Double(cycle.repetitions)))\(span)"
    }

    /// `… 3,924 frames …` or `… 1 frame …`.
    package static func skippedMarker(_ count: Int) -> String {
        "… \(Format.count(Double(count))) \(count == 1 ? "frame" : "frames") not kept …"
    }

    /// `#7`, `#29,096`: a frame's number, as every view writes it.
    package static func frameNumber(_ index: Int) -> String { index < 1000 ? "#\(index)" : "#" + Format.count(Double(index)) }

    /// The inlined functions of a frame, innermost first, then the frame itself.
    package static func frameLines(_ frame: Frame, index: Int, indent: String = "") -> [String] {
        let number = frameNumber(index)
        var lines = (frame.inlined ?? []).map { "\(indent)\(number)  \($0.displayName)" }
        lines.append("\(indent)\(number)  \(frame.displayName)")
        return lines
    }

    /// The whole trace, one frame a line, with the cycle collapsed and a counted
    /// marker for every stretch not shown.
    package static func lines(_ trace: FaultTrace) -> [String] {
        var lines: [String] = []
        for part in TraceLayout(trace).parts {
            switch part {
            case .frame(let index, let frame, let isEntry):
                var frameLines = frameLines(frame, index: index)
                // On the line of the call: the innermost inlined function, when there is one.
                if isEntry { frameLines[0] += "   ← entered the recursion" }
                lines += frameLines
            case .skipped(_, let count):
                lines.append(skippedMarker(count))
            case .cycle(let cycle, let from, let count):
                lines.append(cycleMarker(cycle, from: from, count: count) + ":")
                for frame in cycle.frames {
                    lines += (frame.inlined ?? []).map { "      \($0.displayName)" }
                    lines.append("      \(frame.displayName)")
                }
            }
        }
        if let note = trace.sourceLocations?.note { lines.append("(\(note))") }
        return lines
    }

    /// Where a trial failed in the program's own code, as every view names it: an
    /// overflow's recursion by the frame that entered it, another fault by ``pointOfFailure(_:)``.
    package static func failurePoint(_ trace: FaultTrace) -> (label: String, frame: Frame)? {
        let frame = trace.cycle.map { _ in TraceLayout(trace).entry?.frame.callSite } ?? pointOfFailure(trace)
        return frame.map { (trace.cycle == nil ? "at" : "entered the recursion at", $0) }
    }

    /// The first of `trials` whose failure has a file and line, for an annotation placed there.
    package static func failurePlace(_ trials: [TrialRecord]) -> FailurePlace? {
        trials.lazy.compactMap { trial in
            trial.trace.flatMap(failurePoint).flatMap { point in
                point.frame.file.flatMap { file in point.frame.line.map { FailurePlace(file: file, line: $0, label: point.label, frame: point.frame.displayName) } }
            }
        }.first
    }

    /// The frame to point at for a crash: the first with a source location
    /// outside the C library and Strain's probe (whose `fputs` passes a call on to
    /// libc's, and was blamed for the program's `fputs(NULL, …)`: re-trial 33n, F8),
    /// else the first named one, else the fault's.
    package static func pointOfFailure(_ trace: FaultTrace) -> Frame? {
        let frames = trace.firstFrames
        return frames.first { frame in
            let module = frame.moduleName ?? ""
            return frame.location != nil && !module.hasPrefix("libc.so") && !module.hasPrefix("ld-linux") && module != "libStrainProbe.so"
        } ?? frames.first { $0.symbol != nil } ?? frames.first
    }
}
