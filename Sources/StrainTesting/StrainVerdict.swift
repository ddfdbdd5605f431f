import Foundation
import StrainText

/// What the trial of a test's closure came to: its record, and the verdict in words.
///
/// In the re-run child (see ``expectCompletes(_:on:profile:timeout:sourceLocation:_:)``)
/// an expectation other than the one being run returns a verdict with no record
/// (`ran == false`): every measurement is then nil.
public struct StrainVerdict: Sendable, CustomStringConvertible {
    /// The trial's record, as run.json keeps it; nil where the closure did not run here.
    public let record: TrialRecord?
    /// The record of the same closure on a large stack, run after an overflow to tell
    /// deep recursion from unbounded; nil otherwise.
    public let onLargeStack: TrialRecord?
    /// `debug` or `release`: the build of the test target that measured (stack use
    /// differs between them).
    public let build: String

    /// Whether the closure ran as a trial for this verdict.
    public var ran: Bool { record != nil }
    /// How the trial ended; nil where it did not run here.
    public var outcome: TrialOutcome.Kind? { record?.outcome.kind }
    /// The deepest the closure's thread's stack went, in bytes.
    public var stackHighWaterBytes: Int? { record?.metrics.stackHighWaterBytes }
    /// The stack the closure's thread really had, in bytes.
    public var stackSizeBytes: Int? { record?.metrics.stackSizeBytes }
    /// Allocations the closure made (the malloc family, counted exactly).
    public var allocations: Int? { record?.metrics.allocations }
    /// Bytes the closure allocated.
    public var allocatedBytes: Int? { record?.metrics.allocatedBytes }
    /// The call sites that allocated most, most allocations first.
    public var allocationSites: [AllocationSite] { record?.allocationSites ?? [] }
    /// Instructions the closure executed, counted by callgrind
    /// (``expectInstructions(atMost:_:on:profile:timeout:sourceLocation:_:)``); nil elsewhere.
    public var instructions: Int? { record?.instructionCount?.instructions }
    /// The functions of the test binary's own code (placed at file:line: the team's,
    /// not a library's or Strain's harness around the closure) that executed the most
    /// instructions with what they called, most first; empty where instructions were
    /// not counted.
    public var costliestFunctions: [FunctionCost] {
        (record?.instructionCount?.functions ?? []).filter { $0.place != nil && !FunctionCost.isHarness($0.file) && $0.inclusive > 0 }
            .sorted { ($1.inclusive, $0.name) < ($0.inclusive, $1.name) }
    }
    /// The functions whose own code executed the most instructions, most first,
    /// libraries' included (Strain's harness left out).
    public var busiestFunctions: [FunctionCost] {
        (record?.instructionCount?.functions ?? []).filter { !FunctionCost.isHarness($0.file) && $0.exclusive > 0 }
            .sorted { ($1.exclusive, $0.name) < ($0.exclusive, $1.name) }
    }

    /// The verdict in words: the outcome, where the closure ran, and for a fault its
    /// signal, recursion, the frame that entered it and whether a larger stack helps;
    /// for any outcome but completing, what to do about it.
    public var description: String {
        guard let record else { return "not run in this process (a re-run for another expectation)" }
        var lines = ["\(record.outcome.kind.rawValue) on \(record.strategy) (\(record.profile.rawValue) profile, \(build) build)"]
        if let message = record.outcome.message, !message.isEmpty { lines.append(message) }
        if let trace = record.trace { lines += Self.describe(trace) }
        if let dump = record.dump { lines += Self.describe(dump) }
        for report in (record.sanitizerReports ?? []).prefix(3) { lines += Self.describe(report) }
        if let more = record.sanitizerReports?.dropFirst(3), !more.isEmpty { lines.append("… \(more.count) more reports in the attached run.json") }
        if record.outcome.kind == .stackOverflow || record.trace?.isStackOverflow == true {
            lines.append(largeStackVerdict)
        }
        if record.outcome.kind != .completed { lines.append("what to do: " + advice(record)) }
        if record.outcome.kind == .completed, let high = record.metrics.stackHighWaterBytes {
            lines.append("stack high-water \(ByteSize.prose(high))\(record.metrics.stackSizeBytes.map { " of \(ByteSize.prose($0))" } ?? "")")
        }
        return lines.joined(separator: "\n")
    }

    /// What to do about `record`, worded for a test: an overflow's from the large-stack run
    /// (a stack that fits what it needed there; none for a recursion that overflowed that too).
    func advice(_ record: TrialRecord) -> String {
        if record.outcome.kind == .stackOverflow, let large = onLargeStack {
            if large.outcome.kind == .stackOverflow {
                let size = large.metrics.stackSizeBytes ?? large.strategy.chosenStackBytes ?? 0
                return "The recursion did not end on \(ByteSize.spoken(size)) stack either: find why it never reaches its base case (a cycle in the data, a missing check); a larger stack does not help."
            }
            if large.outcome.kind == .completed, let need = large.metrics.stackHighWaterBytes {
                return OutcomeAdvice.text(for: record, audience: .test, fittingStackBytes: need)
            }
        }
        return OutcomeAdvice.text(for: record, audience: .test)
    }

    /// Deep but finite (with the stack it needed) or unbounded, from the large-stack run.
    var largeStackVerdict: String {
        guard let large = onLargeStack else { return "not run on a larger stack: deep recursion and unbounded recursion are not told apart" }
        let size = large.metrics.stackSizeBytes ?? large.strategy.chosenStackBytes ?? 0
        if large.outcome.kind == .completed {
            let needed = large.metrics.stackHighWaterBytes.map { ", using \(ByteSize.prose($0))" } ?? ""
            return "deep but finite: it completes on \(ByteSize.spoken(size)) stack\(needed)"
        }
        if large.outcome.kind == .stackOverflow {
            return "unbounded: it overflows \(ByteSize.spoken(size)) stack too"
        }
        return "on \(ByteSize.spoken(size)) stack it ended \(large.outcome.kind.rawValue)"
    }

    /// The fault's lines: the signal, the recursion's period, the entry frame.
    static func describe(_ trace: FaultTrace) -> [String] {
        var lines = ["\(trace.signalName) at \(String(format: "0x%llx", trace.faultAddress)); \(MetricDescriptor.Unit.grouped(Double(trace.totalFrames))) frames"
            + (trace.stackSizeBytes.map { " on \(ByteSize.spoken($0)) stack" } ?? "")]
        if let cycle = trace.cycle {
            let shown = cycle.frames.prefix(4).map(\.displayName).joined(separator: " ← ")
            let period = shown + (cycle.frames.count > 4 ? " ← … (\(cycle.frames.count - 4) more in run.json)" : "")
            lines.append("recursion: a cycle of \(cycle.frames.count) frame\(cycle.frames.count == 1 ? "" : "s") × \(MetricDescriptor.Unit.grouped(Double(cycle.repetitions))): \(period)")
            if let entry = entryFrame(of: trace)?.callSite {
                lines.append("entered the recursion: \(entry.displayName)")
            }
        } else {
            let head = trace.firstFrames.prefix(3).map(\.displayName).joined(separator: " ← ")
            if !head.isEmpty { lines.append("at: \(head)") }
        }
        return lines
    }

    /// A stall's threads: each group of identical stacks with what it waits in, the
    /// groups holding the closure's work first (at most 8 groups).
    static func describe(_ dump: ThreadDump) -> [String] {
        let groups = dump.groups.filter(\.inWork) + dump.groups.filter { !$0.inWork }
        var lines = ["\(dump.threadCount) thread\(dump.threadCount == 1 ? "" : "s") when it stalled:"]
        for group in groups.prefix(8) {
            let count = group.count == 1 ? "1 thread" : "\(group.count) threads"
            lines.append("  \(count)\(group.inWork ? " running the closure's work" : ""): \(withoutHarness(group))")
        }
        if groups.count > 8 { lines.append("  … \(counted(groups.count - 8, "more thread group")) in the attached run.json") }
        return lines
    }

    /// A group's summary without Strain's own frames (the thread the closure runs on,
    /// the host's wait for its result): cut before the first frame from a harness
    /// source, which say nothing about the test's code; a thread that waits in the
    /// harness itself says so.
    static func withoutHarness(_ group: ThreadGroup) -> String {
        let harness = Set(group.frames.flatMap { frame in
            ((frame.inlined ?? []).map { ($0.symbol, $0.file) } + [(frame.symbol, frame.file)]).compactMap { symbol, file in
                FunctionCost.isHarness(file) ? symbol.map { $0.hasSuffix(" [partial apply]") ? String($0.dropLast(" [partial apply]".count)) : $0 } : nil
            }
        })
        let parts = group.summary.components(separatedBy: " ← ")
        guard let cut = parts.indices.dropFirst().first(where: { harness.contains(parts[$0]) }) else { return group.summary }
        return parts[..<cut].joined(separator: " ← ") + (cut == 1 ? " in Strain's harness" : "")
    }

    /// A sanitizer's report: its headline, then each access (or other stack) it
    /// names with its first frames, file:line where known.
    static func describe(_ report: SanitizerReport) -> [String] {
        var lines = [report.headline]
        for stack in report.accesses.prefix(2) {
            let frames = stack.frames.filter { $0.symbol != nil || $0.location != nil }.prefix(4).map(SanitizerReport.place)
            lines.append("  \(stack.title): " + (frames.isEmpty ? "(no frames)" : frames.joined(separator: " ← ")))
        }
        return lines
    }

    /// The frame just outside the recursion on the caller's side.
    static func entryFrame(of trace: FaultTrace) -> Frame? {
        guard let cycle = trace.cycle, let end = cycle.endIndex else { return nil }
        if let entry = trace.entryFrames?.first { return entry }
        let offset = end - trace.lastStartIndex
        return trace.lastFrames.indices.contains(offset) ? trace.lastFrames[offset] : nil
    }
}
