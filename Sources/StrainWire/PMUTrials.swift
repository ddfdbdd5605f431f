import StrainRecords

/// A `perf_event_open` event, as its `type` and `config` (linux/perf_event.h).
package struct PerfCounterEvent: Sendable, Hashable, CustomStringConvertible {
    /// `perf_event_attr.type`: `PERF_TYPE_HARDWARE` (0), `PERF_TYPE_SOFTWARE` (1), ….
    package var type: UInt32
    /// `perf_event_attr.config`: the event within its type.
    package var config: UInt64

    /// An event of `type` and `config`.
    package init(type: UInt32, config: UInt64) {
        self.type = type
        self.config = config
    }

    /// Instructions retired (`PERF_TYPE_HARDWARE`, `PERF_COUNT_HW_INSTRUCTIONS`): what
    /// the `pmu` source counts, in user space only.
    package static let instructions = PerfCounterEvent(type: 0, config: 1)
    /// The task's CPU time in nanoseconds (`PERF_TYPE_SOFTWARE`, `PERF_COUNT_SW_TASK_CLOCK`):
    /// a software event every Linux kernel has, for testing the `pmu` path where there is no PMU.
    package static let taskClock = PerfCounterEvent(type: 1, config: 1)
    /// CPU time by the CPU's clock (`PERF_TYPE_SOFTWARE`, `PERF_COUNT_SW_CPU_CLOCK`), idem.
    package static let cpuClock = PerfCounterEvent(type: 1, config: 0)

    /// `PERF_TYPE_HARDWARE/PERF_COUNT_HW_INSTRUCTIONS`, or `type 1 config 1` for another.
    package var description: String {
        switch self {
        case .instructions: "PERF_TYPE_HARDWARE/PERF_COUNT_HW_INSTRUCTIONS"
        case .taskClock: "PERF_TYPE_SOFTWARE/PERF_COUNT_SW_TASK_CLOCK"
        case .cpuClock: "PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK"
        default: "type \(type) config \(config)"
        }
    }

    /// `0:1`: how the parent hands the event to a trial (`PMUTrials.eventVariable`).
    package var environmentValue: String { "\(type):\(config)" }

    /// The event `environmentValue` spelled, or nil.
    package init?(environmentValue: String) {
        let parts = environmentValue.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let type = UInt32(parts[0]), let config = UInt64(parts[1]) else { return nil }
        self.init(type: type, config: config)
    }
}

/// Counted trials by a perf counter (the `pmu` source of `measure: [instructions]`):
/// each trial runs as usual (not under Valgrind), and its host counts the user-space
/// instructions of each thread while it holds the scenario's work with a counter of
/// its own (CStrainProbe/strain_instr.c), and reports the total in its metrics.
///
/// The parent's side: what a counted trial's environment says, and how its report
/// becomes the record's `InstructionCount` (source `pmu`, no function list: only
/// callgrind names functions).
///
/// - Important: a counted trial's timings are not recorded: they include a counter
///   read (a system call) at each unit's start and end, which a unit of a few
///   microseconds would double. Its peak RSS is the work's own and is kept.
package struct PMUTrials: Sendable {
    /// The environment variable that asks a trial for a count, and its value for this source.
    package static let variable = "STRAIN_INSTRUCTIONS"
    package static let value = "pmu"
    /// The environment variable that carries the event (`PerfCounterEvent.environmentValue`).
    package static let eventVariable = "STRAIN_PERF_EVENT"

    /// The event counted: `PerfCounterEvent.instructions`, or a software event in tests.
    package let event: PerfCounterEvent
    /// Scenarios whose work depends on timing (`Scenario.workDependsOnTiming`): not counted.
    package let timingDependent: Set<String>

    /// Trials counting `event`, except `timingDependent` scenarios'.
    package init(event: PerfCounterEvent, timingDependent: Set<String>) {
        self.event = event
        self.timingDependent = timingDependent
    }

    /// Whether `scenario`'s trials are counted, or why not.
    package func notCountable(_ scenario: String) -> String? {
        timingDependent.contains(scenario) ? "not countable: the scenario's work depends on timing (waits, deadlines, pool growth), so its instruction count would too" : nil
    }

    /// What a trial of `scenario` adds to its environment: the count asked for, with
    /// its event; nothing when the scenario is not counted.
    package func environment(of scenario: String) -> [String] {
        notCountable(scenario) == nil ? ["\(Self.variable)=\(Self.value)", "\(Self.eventVariable)=\(event.environmentValue)"] : []
    }

    /// The record of a trial of `scenario` whose report said `reported` instructions.
    package func count(scenario: String, completed: Bool, reported: Int?) -> InstructionCount {
        if let reason = notCountable(scenario) { return InstructionCount(source: Self.value, instructions: nil, notCountable: reason) }
        guard completed else {
            return InstructionCount(source: Self.value, instructions: nil, notCountable: "not countable: the trial did not complete, so its work was cut short")
        }
        guard let reported else {
            return InstructionCount(source: Self.value, instructions: nil, notCountable: "not counted: the trial reported no count from its perf counters")
        }
        return InstructionCount(source: Self.value, instructions: reported)
    }
}
