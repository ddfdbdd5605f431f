import StrainKit

/// Finds the repeating run in a stack: the recursion an overflow is made of.
public enum RecursionCycleFinder {
    /// A periodic stretch of a sequence.
    public struct Match: Equatable, Sendable {
        /// Index where the stretch starts.
        public var start: Int
        /// Length of one period.
        public var period: Int
        /// Whole periods in the stretch.
        public var repetitions: Int

        /// Elements the stretch covers.
        public var length: Int { period * repetitions }
    }

    /// The stretch of `sequence` that repeats with the shortest period covering
    /// the most elements, at least `minimumRepetitions` times; nil if none does.
    ///
    /// For each period p it scans once for the longest run where element i
    /// equals element i + p: O(n × maximumPeriod).
    public static func find<Element: Equatable>(in sequence: [Element], maximumPeriod: Int = 64, minimumRepetitions: Int = 3) -> Match? {
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
            let match = Match(start: bestStart, period: period, repetitions: repetitions)
            // A multiple of a shorter period covers no more: keep the shorter one.
            if best == nil || match.length > best!.length + best!.period - 1 {
                best = match
            }
        }
        return best
    }
}

/// Turns a raw fault record into the trace a report shows.
public struct TraceBuilder: Sendable {
    public let symbolizer: Symbolizer
    /// Frames kept at each end of the trace in the record.
    public var edgeFrames = 16

    public init(symbolizer: Symbolizer) {
        self.symbolizer = symbolizer
    }

    public func trace(from record: FaultRecord) -> FaultTrace {
        let kept = record.headFrames + record.tailFrames
        var cycle: RecursionCycle?
        if let match = RecursionCycleFinder.find(in: record.headFrames) {
            var repetitions = match.repetitions
            // A stack longer than the buffer lost its middle; when the cycle runs
            // to the end of the head and the tail repeats it too, count through the gap.
            if record.omittedFrames > 0, match.start + match.length + match.period >= record.headFrames.count {
                let period = Array(record.headFrames[match.start..<(match.start + match.period)])
                if let tailMatch = RecursionCycleFinder.find(in: record.tailFrames), tailMatch.period == match.period,
                   Set(record.tailFrames[tailMatch.start..<(tailMatch.start + tailMatch.period)]) == Set(period) {
                    repetitions += (record.omittedFrames + tailMatch.length) / match.period
                }
            }
            let frames = symbolizer.frames(for: Array(record.headFrames[match.start..<(match.start + match.period)]), maps: record.maps, firstIsExact: match.start == 0)
            cycle = RecursionCycle(frames: frames, repetitions: repetitions, startIndex: match.start)
        }
        let first = symbolizer.frames(for: Array(kept.prefix(edgeFrames)), maps: record.maps, firstIsExact: true)
        let lastAddresses = Array(kept.suffix(min(edgeFrames, max(0, kept.count - edgeFrames))))
        let last = symbolizer.frames(for: lastAddresses, maps: record.maps, firstIsExact: false)
        return FaultTrace(
            signal: record.signal, faultAddress: record.address, isStackOverflow: record.isOverflow,
            stackLow: record.stackLow, stackHigh: record.stackHigh, guardSizeBytes: record.guardSize,
            totalFrames: record.totalFrames, omittedFrames: record.omittedFrames,
            firstFrames: first, lastFrames: last, cycle: cycle,
            markedDepth: record.markedDepth > 0 ? record.markedDepth : nil,
            walkNanoseconds: record.walkNanoseconds, captureNanoseconds: record.captureNanoseconds
        )
    }
}
