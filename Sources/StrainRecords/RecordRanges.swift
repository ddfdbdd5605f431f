/// What a valid number in a run.json is: the one place every reader's ranges
/// come from. `RunRecordFile.read` and `load` check a record against these
/// before anyone uses it, so a report, the gate, a baseline or a merge never
/// does arithmetic on a value no run could have written.
public enum RecordRanges {
    /// Counts and byte sizes (frames kept aside): whole numbers from 0 to 2^53,
    /// the largest a report's `Double` holds exactly.
    public static let count = 0...(1 << 53)
    /// A frame's index in a stack, a stack's frame count and a cycle's
    /// repetitions: 0 to 2^32 (a 1 GiB stack holds at most 2^26 frames of 16
    /// bytes), so that index + repetitions × period never overflows.
    public static let frames = 0...(1 << 32)
    /// A stack's bounds: user-space addresses, 0 to 2^56 (the most a 64-bit
    /// Linux gives a process, with 5-level page tables).
    public static let stackAddress: ClosedRange<UInt64> = 0...(1 << 56)
    /// A signal's number: 1 to 64 (SIGRTMAX).
    public static let signal: ClosedRange<Int32> = 1...64
    /// A repetition's number, and a run's repetitions: 1 to 10,000 (the suite's limit).
    public static let repetitions = 1...10_000
    /// A trial's position in its plan: 0 to 99,999; a plan's trial count: 0 to
    /// 100,000 (the plan limit).
    public static let trialIndex = 0...99_999
    /// See `trialIndex`.
    public static let trialCount = 0...100_000
    /// A shard count: 1 to 1,000 (as `--shard K/N` takes it); a shard's index: 1 to its count.
    public static let shardCount = 1...1_000
    /// Trials run at once (`--jobs`): 1 to 64.
    public static let jobs = 1...64
    /// A latency curve's percentile: 0 to 100.
    public static let percentile = 0.0...100.0
    /// A share (CPU steal): 0 to 1.
    public static let fraction = 0.0...1.0
}

/// A number in a run.json outside its range, with the field's path.
public struct RecordRangeError: Error, Sendable, CustomStringConvertible {
    /// Where the value is: `trials[3].trace.stackLow`.
    public var field: String
    /// The value as the file has it.
    public var value: String
    /// What a valid value is: `a whole number from 0 to 4294967296`.
    public var range: String

    /// `trials[3].trace.stackLow is 9223372036854775808; a valid value is …`.
    public var description: String { "\(field) is \(value); a valid value is \(range)" }
}

/// Walks a record, keeping the path to the field it looks at.
struct RangeCheck {
    var path: String

    /// The field `key` of this one; a key `[3]` is an element of it.
    func at(_ key: String) -> RangeCheck { RangeCheck(path: path.isEmpty || key.hasPrefix("[") ? path + key : "\(path).\(key)") }
    func at(_ index: Int) -> RangeCheck { RangeCheck(path: "\(path)[\(index)]") }

    func int(_ value: Int, _ key: String, in range: ClosedRange<Int>, _ meaning: String? = nil) throws(RecordRangeError) {
        guard range.contains(value) else {
            throw RecordRangeError(field: at(key).path, value: "\(value)", range: meaning ?? "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    func int(_ value: Int?, _ key: String, in range: ClosedRange<Int>, _ meaning: String? = nil) throws(RecordRangeError) {
        if let value { try int(value, key, in: range, meaning) }
    }

    func count(_ value: Int?, _ key: String) throws(RecordRangeError) {
        try int(value, key, in: RecordRanges.count)
    }

    func address(_ value: UInt64?, _ key: String) throws(RecordRangeError) {
        guard let value else { return }
        let range = RecordRanges.stackAddress
        guard range.contains(value) else {
            throw RecordRangeError(field: at(key).path, value: "\(value)", range: "an address from \(range.lowerBound) to \(range.upperBound) (2^56)")
        }
    }

    func signal(_ value: Int32?, _ key: String) throws(RecordRangeError) {
        guard let value else { return }
        let range = RecordRanges.signal
        guard range.contains(value) else {
            throw RecordRangeError(field: at(key).path, value: "\(value)", range: "a signal number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    /// A finite number, and not below 0 unless `signed`.
    func real(_ value: Double?, _ key: String, signed: Bool = false) throws(RecordRangeError) {
        guard let value else { return }
        guard value.isFinite, signed || value >= 0 else {
            throw RecordRangeError(field: at(key).path, value: "\(value)", range: signed ? "a finite number" : "a finite number from 0")
        }
    }

    func real(_ value: Double?, _ key: String, in range: ClosedRange<Double>) throws(RecordRangeError) {
        guard let value else { return }
        guard value.isFinite, range.contains(value) else {
            func text(_ bound: Double) -> String { bound == bound.rounded() && bound.magnitude <= 1e18 ? "\(Int(bound))" : "\(bound)" }
            throw RecordRangeError(field: at(key).path, value: "\(value)", range: "a number from \(text(range.lowerBound)) to \(text(range.upperBound))")
        }
    }
}

extension RunRecord {
    /// Checks every number in the record against `RecordRanges`.
    ///
    /// - Throws: `RecordRangeError` for the first value out of range, with its field's path.
    public func validateRanges() throws(RecordRangeError) {
        let check = RangeCheck(path: "")
        try check.count(runnerPeakRSSBytes, "runnerPeakRSSBytes")
        try suite.validateRanges(check.at("suite"))
        try environment.validateRanges(check.at("environment"))
        try check.int(trials.count, "trials.count", in: RecordRanges.trialCount, "at most \(RecordRanges.trialCount.upperBound) trials")
        for (index, trial) in trials.enumerated() { try trial.validateRanges(check.at("trials").at(index)) }
        // One trial, one ID: a second record under an ID would be read as a repetition that never ran.
        var seen: [TrialID: Int] = [:]
        for (index, trial) in trials.enumerated() {
            if let first = seen.updateValue(index, forKey: trial.id) {
                throw RecordRangeError(field: check.at("trials").at(index).path + ".id", value: trial.id.description,
                                       range: "an ID no other trial has (trials[\(first)] has it too): one trial, one ID")
            }
        }
        if let plan { try plan.validateRanges(check.at("plan")) }
        for (index, shard) in (shards ?? []).enumerated() { try shard.validateRanges(check.at("shards").at(index)) }
        if let bisect { try bisect.validateRanges(check.at("bisect")) }
        if let execution {
            let here = check.at("execution")
            try here.count(execution.serverTrials, "serverTrials")
            try here.count(execution.serverRestarts, "serverRestarts")
            try here.int(execution.jobs, "jobs", in: RecordRanges.jobs)
            for (index, sample) in (execution.runnerRSS ?? []).enumerated() {
                try here.at("runnerRSS").at(index).count(sample.trials, "trials")
                try here.at("runnerRSS").at(index).count(sample.bytes, "bytes")
            }
        }
    }
}

extension PlanRecord {
    /// Checks the plan's numbers, for a reader of a plan outside a run.json (a
    /// journal's header): `place` starts each field's path, e.g. `plan` gives `plan.trialCount`.
    public func validateRanges(at place: String) throws(RecordRangeError) {
        try validateRanges(RangeCheck(path: place))
    }

    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.int(trialCount, "trialCount", in: RecordRanges.trialCount)
        if let shard { try shard.validateRanges(check.at("shard")) }
    }
}

extension ShardRecord {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.int(count, "count", in: RecordRanges.shardCount)
        try check.int(index, "index", in: 1...count)
        try check.int(trialCount, "trialCount", in: RecordRanges.trialCount)
        if let environment { try environment.validateRanges(check.at("environment")) }
    }
}

extension ResolvedSuite {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.int(repetitions, "repetitions", in: RecordRanges.repetitions)
        try check.real(timeoutSeconds, "timeoutSeconds")
        try check.real(stallSeconds, "stallSeconds")
        for (name, threshold) in gate ?? [:] { try threshold.validateRanges(check.at("gate").at(name)) }
        for (index, run) in runs.enumerated() {
            let here = check.at("runs").at(index)
            try here.int(run.repetitions, "repetitions", in: RecordRanges.repetitions)
            try here.real(run.timeoutSeconds, "timeoutSeconds")
            try here.real(run.stallSeconds, "stallSeconds")
            try here.int(run.line, "line", in: 1...Int(Int32.max))
            for (name, threshold) in run.gate ?? [:] { try threshold.validateRanges(here.at("gate").at(name)) }
        }
    }
}

extension MetricThreshold {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.real(delta, "delta", signed: true)
        try check.real(floor, "floor", signed: true)
    }
}

extension EnvironmentRecord {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.count(cores, "cores")
        try check.count(memoryBytes, "memoryBytes")
        for (name, value) in rlimits { try check.at("rlimits").int(value, name, in: -1...Int.max, "-1 (unlimited) or a whole number from 0") }
        try check.real(cgroupCPULimit, "cgroupCPULimit")
        try check.real(loadAverageStart, "loadAverageStart")
        try check.real(loadAverageEnd, "loadAverageEnd")
        try check.real(stealFraction, "stealFraction", in: RecordRanges.fraction)
    }
}

extension TrialRecord {
    /// Checks every number in this trial against `RecordRanges`, for a reader of
    /// trials outside a run.json (the journal): `place` starts each field's path,
    /// e.g. `trials.jsonl:3` gives `trials.jsonl:3.trace.stackLow`.
    public func validateRanges(at place: String) throws(RecordRangeError) {
        try validateRanges(RangeCheck(path: place))
    }

    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.int(id.repetition, "repetition", in: RecordRanges.repetitions)
        try check.int(index, "index", in: RecordRanges.trialIndex)
        try check.at("outcome").signal(outcome.signal, "signal")
        try metrics.validateRanges(check.at("metrics"))
        if let trace { try trace.validateRanges(check.at("trace")) }
        if let dump { try dump.validateRanges(check.at("dump")) }
        if let stall {
            let here = check.at("stall")
            try here.real(stall.thresholdSeconds, "thresholdSeconds")
            try here.real(stall.silentSeconds, "silentSeconds")
            try here.real(stall.reportedAfterSeconds, "reportedAfterSeconds")
            try here.real(stall.recordedAfterSeconds, "recordedAfterSeconds")
            for (key, value) in [("queued", stall.queued), ("started", stall.started), ("finished", stall.finished),
                                 ("threadsInWork", stall.threadsInWork), ("threadsInUntimedWait", stall.threadsInUntimedWait)] {
                try here.count(value, key)
            }
        }
        for (index, violation) in (confinementViolations ?? []).enumerated() {
            let here = check.at("confinementViolations").at(index)
            try here.count(violation.threadID, "threadID")
            try here.count(violation.count, "count")
            try Frame.validateRanges(violation.accessStack, here.at("accessStack"))
            try Frame.validateRanges(violation.ownerStack, here.at("ownerStack"))
        }
        for (index, report) in (sanitizerReports ?? []).enumerated() {
            let here = check.at("sanitizerReports").at(index)
            try here.count(report.pid, "pid")
            try here.count(report.count, "count")
            for (name, stacks) in [("accesses", report.accesses), ("location", report.location), ("threads", report.threads)] {
                for (position, stack) in stacks.enumerated() { try Frame.validateRanges(stack.frames, here.at(name).at(position).at("frames")) }
            }
        }
        try Self.validateSites(allocationSites ?? [], check.at("allocationSites"))
        if let count = instructionCount {
            let here = check.at("instructionCount")
            try here.count(count.instructions, "instructions")
            for (index, function) in (count.functions ?? []).enumerated() {
                try here.at("functions").at(index).count(function.inclusive, "inclusive")
                try here.at("functions").at(index).count(function.exclusive, "exclusive")
                try here.at("functions").at(index).count(function.line, "line")
            }
        }
        for (index, sample) in (threadTimeline ?? []).enumerated() {
            try check.at("threadTimeline").at(index).real(sample.seconds, "seconds")
            try check.at("threadTimeline").at(index).count(sample.threads, "threads")
        }
        for (index, verdict) in (capVerdicts ?? []).enumerated() {
            try check.at("capVerdicts").at(index).count(verdict.cap, "cap")
            try check.at("capVerdicts").at(index).count(verdict.needed, "needed")
        }
    }
}

extension TrialRecord {
    /// Each site's counts, and their sums: the sites are parts of one trial's
    /// allocations, so together they hold no more than a count can (2^53), and a
    /// gate that adds a trial's sites of one place never overflows.
    static func validateSites(_ sites: [AllocationSite], _ check: RangeCheck) throws(RecordRangeError) {
        var allocations = 0
        var bytes = 0
        for (index, site) in sites.enumerated() {
            let here = check.at(index)
            try here.count(site.allocations, "allocations")
            try here.count(site.bytes, "bytes")
            try here.at("frame").count(site.frame.line, "line")
            try here.at("frame").count(site.frame.column, "column")
            // Each term is at most 2^53, so the sum of two is far from Int.max; checked all the same.
            let summed = (allocations.addingReportingOverflow(site.allocations), bytes.addingReportingOverflow(site.bytes))
            allocations = summed.0.overflow ? Int.max : summed.0.partialValue
            bytes = summed.1.overflow ? Int.max : summed.1.partialValue
            let limit = RecordRanges.count.upperBound
            if allocations > limit {
                throw RecordRangeError(field: here.path + ".allocations", value: "\(site.allocations)",
                                       range: "a count that keeps the trial's sites' allocations within 0 to \(limit) (2^53) in all; they reach \(allocations)")
            }
            if bytes > limit {
                throw RecordRangeError(field: here.path + ".bytes", value: "\(site.bytes)",
                                       range: "a count that keeps the trial's sites' bytes within 0 to \(limit) (2^53) in all; they reach \(bytes)")
            }
        }
    }
}

extension TrialMetrics {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        for (key, value) in [("wallSeconds", wallSeconds), ("userSeconds", userSeconds), ("systemSeconds", systemSeconds),
                             ("throughputPerSecond", throughputPerSecond), ("trialSeconds", trialSeconds)] {
            try check.real(value, key)
        }
        for (key, value) in [("peakRSSBytes", peakRSSBytes), ("voluntaryContextSwitches", voluntaryContextSwitches),
                             ("involuntaryContextSwitches", involuntaryContextSwitches), ("peakThreads", peakThreads),
                             ("peakBlockedWorkers", peakBlockedWorkers), ("stackSizeBytes", stackSizeBytes),
                             ("stackHighWaterBytes", stackHighWaterBytes), ("depth", depth),
                             // Counted: a gate sums them and tells their growth; a negative count is no count.
                             ("allocations", allocations), ("allocatedBytes", allocatedBytes), ("frees", frees),
                             ("instructions", instructions)] {
            try check.count(value, key)
        }
        try check.int(frames, "frames", in: RecordRanges.frames)
        // A scenario's own metric may be below 0 (a difference); it is finite.
        for (name, value) in custom.sorted(by: { $0.key < $1.key }) { try check.at("custom").real(value, name, signed: true) }
        if let latency {
            let here = check.at("latency")
            for (key, value) in [("count", latency.count), ("minNanoseconds", latency.minNanoseconds), ("p50Nanoseconds", latency.p50Nanoseconds),
                                 ("p90Nanoseconds", latency.p90Nanoseconds), ("p99Nanoseconds", latency.p99Nanoseconds),
                                 ("p999Nanoseconds", latency.p999Nanoseconds), ("maxNanoseconds", latency.maxNanoseconds)] {
                try here.count(value, key)
            }
            try here.real(latency.meanNanoseconds, "meanNanoseconds")
            for (index, point) in latency.curve.enumerated() {
                try here.at("curve").at(index).real(point.percentile, "percentile", in: RecordRanges.percentile)
                try here.at("curve").at(index).count(point.nanoseconds, "nanoseconds")
            }
        }
        if let fairness {
            let here = check.at("fairness")
            for (index, operations) in fairness.operationsPerWorker.enumerated() { try here.at("operationsPerWorker").count(operations, "[\(index)]") }
            try here.real(fairness.spread, "spread")
            // 1 at most in exact arithmetic; a Double's rounding may pass it by an ulp.
            try here.real(fairness.jainIndex, "jainIndex")
        }
    }
}

extension FaultTrace {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.signal(signal, "signal")
        try check.address(stackLow, "stackLow")
        try check.address(stackHigh, "stackHigh")
        if let stackLow, let stackHigh, stackLow >= stackHigh {
            throw RecordRangeError(field: check.at("stackHigh").path, value: "\(stackHigh)",
                                   range: "an address above stackLow (\(stackLow)): the stack's bounds are swapped or empty")
        }
        try check.int(guardSizeBytes, "guardSizeBytes", in: 0...(1 << 56))
        let frames = RecordRanges.frames
        try check.int(totalFrames, "totalFrames", in: frames)
        try check.int(omittedFrames, "omittedFrames", in: 0...totalFrames, "a whole number from 0 to totalFrames (\(totalFrames))")
        try check.int(lastFramesStartIndex, "lastFramesStartIndex", in: 0...totalFrames, "a whole number from 0 to totalFrames (\(totalFrames))")
        try Frame.validateRanges(firstFrames, check.at("firstFrames"))
        try Frame.validateRanges(lastFrames, check.at("lastFrames"))
        try Frame.validateRanges(entryFrames ?? [], check.at("entryFrames"))
        if let cycle {
            let here = check.at("cycle")
            try here.int(cycle.frames.count, "frames.count", in: 1...frames.upperBound, "at least 1 frame in a cycle's period")
            try here.int(cycle.repetitions, "repetitions", in: frames)
            try here.int(cycle.startIndex, "startIndex", in: 0...totalFrames, "a whole number from 0 to totalFrames (\(totalFrames))")
            try here.int(cycle.endIndex, "endIndex", in: cycle.startIndex...max(cycle.startIndex, totalFrames),
                         "a whole number from startIndex (\(cycle.startIndex)) to totalFrames (\(totalFrames))")
            try Frame.validateRanges(cycle.frames, here.at("frames"))
        }
        try check.int(markedDepth, "markedDepth", in: RecordRanges.count)
        try check.count(walkNanoseconds, "walkNanoseconds")
        try check.count(captureNanoseconds, "captureNanoseconds")
        try check.count(threadID, "threadID")
    }
}

extension Frame {
    static func validateRanges(_ frames: [Frame], _ check: RangeCheck) throws(RecordRangeError) {
        for (index, frame) in frames.enumerated() {
            let here = check.at(index)
            try here.count(frame.line, "line")
            try here.count(frame.column, "column")
            for (inner, inlined) in (frame.inlined ?? []).enumerated() {
                try here.at("inlined").at(inner).count(inlined.line, "line")
                try here.at("inlined").at(inner).count(inlined.column, "column")
            }
        }
    }
}

extension ThreadDump {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.count(threadCount, "threadCount")
        try check.count(dumpNanoseconds, "dumpNanoseconds")
        for (index, tid) in unreached.enumerated() { try check.at("unreached").count(tid, "[\(index)]") }
        for (index, group) in groups.enumerated() {
            let here = check.at("groups").at(index)
            try here.count(group.count, "count")
            for (inner, thread) in group.threads.enumerated() {
                try here.at("threads").at(inner).count(thread.tid, "tid")
                try here.at("threads").at(inner).int(thread.framesNotKept, "framesNotKept", in: 1...Int(Int32.max))
            }
            try Frame.validateRanges(group.frames, here.at("frames"))
        }
        for (index, link) in (waitCycle?.links ?? []).enumerated() { try check.at("waitCycle").at("links").at(index).count(link.tid, "tid") }
    }
}

extension BisectSection {
    func validateRanges(_ check: RangeCheck) throws(RecordRangeError) {
        try check.real(wallSeconds, "wallSeconds")
        for (index, search) in searches.enumerated() {
            let here = check.at("searches").at(index)
            // What the answer's sentence reads: a passing value for an answer, the parameter's name for a parameter search.
            switch search.verdict {
            case .boundary, .alwaysCompletes:
                if search.passing == nil {
                    throw RecordRangeError(field: here.at("passing").path, value: "absent", range: "a whole number when the verdict is \(search.verdict.rawValue)")
                }
            case .nondeterministic, .unbounded, .neverCompletes: break
            }
            if search.question == .parameter, search.parameter == nil {
                throw RecordRangeError(field: here.at("parameter").path, value: "absent", range: "the parameter's name when the question is parameter")
            }
            try here.int(search.unit, "unit", in: 1...Int.max)
            try here.int(search.high, "high", in: search.low...Int.max, "a whole number from low (\(search.low))")
            try here.int(search.repetitions, "repetitions", in: RecordRanges.repetitions)
            try here.real(search.wallSeconds, "wallSeconds")
            for (inner, probe) in search.probes.enumerated() { try here.at("probes").int(probe, "[\(inner)]", in: RecordRanges.trialIndex) }
            for (inner, overflow) in search.overflows.enumerated() {
                let evidence = here.at("overflows").at(inner)
                try evidence.count(overflow.stackBytes, "stackBytes")
                try evidence.int(overflow.frames, "frames", in: RecordRanges.frames)
                try evidence.int(overflow.repetitions, "repetitions", in: RecordRanges.frames)
                try evidence.count(overflow.depth, "depth")
            }
        }
        if let slope {
            let here = check.at("slope")
            // Reports round them to whole bytes.
            let bytes = -Double(RecordRanges.count.upperBound)...Double(RecordRanges.count.upperBound)
            try here.real(slope.bytesPerUnit, "bytesPerUnit", in: bytes)
            try here.real(slope.interceptBytes, "interceptBytes", in: bytes)
            for (index, point) in slope.points.enumerated() { try here.at("points").at(index).count(point.stackBytes, "stackBytes") }
            for (index, capacity) in slope.capacities.enumerated() { try here.at("capacities").at(index).count(capacity.stackBytes, "stackBytes") }
        }
    }
}
