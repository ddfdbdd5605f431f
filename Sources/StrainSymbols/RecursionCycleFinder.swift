import StrainRecords
import StrainWire

/// Finds the repeating run in a stack: the recursion an overflow is made of.
package enum RecursionCycleFinder {
    /// A periodic stretch of a sequence.
    package struct Match: Equatable, Sendable {
        /// Index where the stretch starts.
        package var start: Int
        /// Length of one period.
        package var period: Int
        /// Whole periods in the stretch.
        package var repetitions: Int
        /// Index just past the stretch, which may end in part of one more period.
        package var end: Int

        /// Elements the stretch covers.
        package var length: Int { period * repetitions }
    }

    /// The stretch of `sequence` that repeats with the shortest period covering
    /// the most elements, at least `minimumRepetitions` times; nil if none does.
    ///
    /// For each period p it scans once for the longest run where element i
    /// equals element i + p: O(n × maximumPeriod).
    package static func find<Element: Equatable>(in sequence: [Element], maximumPeriod: Int = 64, minimumRepetitions: Int = 3) -> Match? {
        guard sequence.count >= 2 else { return nil }
        var best: Match?
        for period in 1...min(maximumPeriod, sequence.count / 2) {
            var runStart = 0
            var runLength = 0
            var bestStart = 0
            var bestLength = 0
            for index in 0..<(sequence.count - period) {
                if sequence[index] == sequence[index + period] {
                    if runLength == 0 { runStart = index }
                    runLength += 1
                    if runLength > bestLength {
                        bestLength = runLength
                        bestStart = runStart
                    }
                } else {
                    runLength = 0
                }
            }
            let repetitions = (bestLength + period) / period
            guard repetitions >= minimumRepetitions else { continue }
            let match = Match(start: bestStart, period: period, repetitions: repetitions, end: bestStart + bestLength + period)
            // A multiple of a shorter period covers no more: keep the shorter one.
            if best == nil || match.length > best!.length + best!.period - 1 {
                best = match
            }
        }
        return best
    }
}

/// Turns a raw fault record into the trace a report shows: the frames from the
/// fault to the recursion, the recursion as one period and its count, the frames
/// from where the caller entered it, and the thread's outermost frames; every
/// frame's index is its place in the whole stack.
package struct TraceBuilder: Sendable {
    package let symbolizer: Symbolizer
    /// Frames kept from the fault, and at the thread's outer end.
    package var edgeFrames = 16
    /// Frames kept from the recursion's entry, when the outer end is farther.
    package var entryFrames = 8

    package init(symbolizer: Symbolizer) {
        self.symbolizer = symbolizer
    }

    package func trace(from record: FaultRecord) -> FaultTrace {
        let head = record.headFrames
        let tail = record.tailFrames
        let omitted = record.omittedFrames
        let total = max(record.totalFrames, head.count + tail.count + omitted)
        /// The address at `index` in the whole stack; nil inside the gap the handler could not keep.
        func address(_ index: Int) -> UInt64? {
            if index < head.count { return head[index] }
            let tailIndex = index - head.count - omitted
            return tailIndex >= 0 && tailIndex < tail.count ? tail[tailIndex] : nil
        }
        func addresses(_ range: Range<Int>) -> [UInt64] { range.compactMap(address) }

        var cycle: RecursionCycle?
        var match = RecursionCycleFinder.find(in: omitted == 0 ? head + tail : head)
        if var found = match, omitted > 0, found.end >= head.count {
            // The stack lost its middle: when the tail starts inside the same cycle, count through the gap.
            let period = Array(head[found.start..<(found.start + found.period)])
            if let tailMatch = RecursionCycleFinder.find(in: tail), tailMatch.start == 0, tailMatch.period == found.period,
               Set(tail[0..<tailMatch.period]) == Set(period) {
                found.end = head.count + omitted + tailMatch.end
                found.repetitions = (found.end - found.start) / found.period
            }
            match = found
        }
        if let found = match {
            let frames = symbolizer.frames(for: Array(addresses(found.start..<(found.start + found.period))), maps: record.maps, firstIsExact: found.start == 0)
            if Self.isInterpreterEntryOnly(frames) {
                // Each frame runs a different interpreted function: a chain of calls, not a recursion.
                match = nil
            } else {
                cycle = RecursionCycle(frames: frames, repetitions: found.repetitions, startIndex: found.start, endIndex: found.end)
            }
        }

        let firstCount: Int
        var entry: [Frame]?
        let lastStart: Int
        if let match {
            firstCount = min(match.start, edgeFrames)
            let outer = total - match.end
            if outer <= edgeFrames * 2 {
                lastStart = match.end
            } else {
                entry = symbolizer.frames(for: addresses(match.end..<(match.end + entryFrames)), maps: record.maps, firstIsExact: false)
                lastStart = total - edgeFrames
            }
        } else if total <= edgeFrames * 2 + entryFrames {
            firstCount = total
            lastStart = total
        } else {
            firstCount = edgeFrames
            lastStart = total - edgeFrames
        }
        let first = symbolizer.frames(for: addresses(0..<firstCount), maps: record.maps, firstIsExact: true)
        let last = symbolizer.frames(for: addresses(lastStart..<total), maps: record.maps, firstIsExact: false)
        var listed = [0..<firstCount, lastStart..<total]
        if let match, entry != nil { listed.append(match.end..<(match.end + entryFrames)) }
        let notShown = Self.framesNotShown(total: total, listed: listed, cycle: match.map { $0.start..<$0.end },
                                           lost: head.count..<(head.count + omitted))
        var trace = FaultTrace(
            signal: record.signal, faultAddress: record.address, isStackOverflow: record.isOverflow,
            stackLow: record.stackLow, stackHigh: record.stackHigh, guardSizeBytes: record.guardSize,
            totalFrames: total, omittedFrames: notShown,
            firstFrames: first, lastFrames: last, cycle: cycle,
            markedDepth: record.markedDepth > 0 ? record.markedDepth : nil,
            walkNanoseconds: record.walkNanoseconds, captureNanoseconds: record.captureNanoseconds
        )
        trace.lastFramesStartIndex = lastStart
        trace.entryFrames = entry
        if record.walkEnd != nil || record.lastStackPointer != nil { trace.walkStoppedShort = record.walkStoppedShort }
        trace.walk = record.walk
        trace.walkFallback = record.walkFallback
        trace.threadID = record.threadID.map(Int.init)
        trace.threadName = record.threadName
        trace.sourceLocations = symbolizer.sourceLocations(of: first + (cycle?.frames ?? []) + (entry ?? []) + last)
        return trace
    }

    /// Native frames an interpreter enters once per interpreted call, whatever function
    /// it runs: V8 runs every JavaScript function's bytecode in one
    /// `Builtins_InterpreterEntryTrampoline` frame (and, once warmer, one
    /// `Builtins_BaselineOutOfLinePrologue` frame), so ten distinct JavaScript frames
    /// walk as ten frames at one return address.
    static let interpreterEntries: Set<String> = ["Builtins_InterpreterEntryTrampoline", "Builtins_BaselineOutOfLinePrologue"]

    /// Whether every frame of a repeating period is an interpreter's entry: the repeat
    /// says nothing about which interpreted functions ran (a native walk cannot see
    /// them), so it is no evidence of a recursion and is not called a cycle.
    static func isInterpreterEntryOnly(_ frames: [Frame]) -> Bool {
        !frames.isEmpty && frames.allSatisfy { frame in frame.symbol.map { interpreterEntries.contains($0) } ?? false }
    }

    /// Frames of a `total`-frame stack that a trace lists nowhere: outside the `listed`
    /// ranges (first, entry and last frames), less the `lost` ones the handler counted
    /// but could not keep, and outside the `cycle`'s span, which stands for all its
    /// frames (those lost too). A trace that kept 16 + 16 of 131,000 frames without a
    /// cycle said 0 here, the handler's own gap.
    static func framesNotShown(total: Int, listed: [Range<Int>], cycle: Range<Int>?, lost: Range<Int>) -> Int {
        guard total > 0 else { return 0 }
        let whole = 0..<total
        var shown: [Range<Int>] = []
        for range in listed.map({ $0.clamped(to: whole) }) where !range.isEmpty {
            guard !lost.isEmpty, range.overlaps(lost) else { shown.append(range); continue }
            if range.lowerBound < lost.lowerBound { shown.append(range.lowerBound..<lost.lowerBound) }
            if range.upperBound > lost.upperBound { shown.append(lost.upperBound..<range.upperBound) }
        }
        if let cycle { shown.append(cycle.clamped(to: whole)) }
        var covered = 0
        var reached = 0
        for range in shown.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.upperBound > reached {
            covered += range.upperBound - max(range.lowerBound, reached)
            reached = range.upperBound
        }
        return total - covered
    }
}
