internal import CStrainProbe
import Foundation
import StrainWire

/// Where a counted trial's instructions come from (`measure: [instructions]`).
package enum InstructionSource: Equatable, Sendable {
    /// A perf counter of `event` in each thread of the work: the machine's PMU
    /// (`PerfCounterEvent.instructions`), or a software event in tests.
    case pmu(PerfCounterEvent)
    /// Valgrind's callgrind, with each trial run under it.
    case callgrind

    /// The environment variable that forces a source: `pmu` or `callgrind`.
    package static let forcingVariable = "STRAIN_INSTRUCTIONS_SOURCE"
    /// For tests only: the `pmu` source counts this event instead of hardware
    /// instructions (`task-clock` or `cpu-clock`, software events every kernel has), so
    /// the same code path runs, and is tested, on a machine without a PMU. Its counts
    /// are then nanoseconds of CPU time, not instructions.
    package static let testEventVariable = "STRAIN_TEST_PERF_EVENT"

    /// The source for a run: the one `STRAIN_INSTRUCTIONS_SOURCE` forces, else `pmu` where
    /// `probe` can open a counter of user-space instructions, else `callgrind`.
    ///
    /// - Throws: `InstructionSourceError`: a forced or test value that is not one, or
    ///   `pmu` forced where the counter does not open (never a silent fallback).
    package static func choose(environment: [String: String], probe: some PerfCounterProbe) throws(InstructionSourceError) -> InstructionSource {
        let event: PerfCounterEvent
        switch environment[testEventVariable] {
        case nil: event = .instructions
        case "task-clock"?: event = .taskClock
        case "cpu-clock"?: event = .cpuClock
        case let other?:
            throw InstructionSourceError(kind: .badValue, message: "\(testEventVariable)=\(other) is not an event this test switch knows; use task-clock or cpu-clock, or unset it")
        }
        switch environment[forcingVariable] {
        case nil, ""?:
            return probe.failure(opening: event) == nil ? .pmu(event) : .callgrind
        case "callgrind"?:
            return .callgrind
        case "pmu"?:
            if let failure = probe.failure(opening: event) {
                throw InstructionSourceError(kind: .unavailable, message: "\(forcingVariable)=pmu, but this machine cannot count with a perf counter: perf_event_open(\(event), user space only) fails with \(failure); a VM without a virtual PMU, or /proc/sys/kernel/perf_event_paranoid above 2, refuses it. Unset \(forcingVariable) (or set it to callgrind) to count under Valgrind's callgrind")
            }
            return .pmu(event)
        case let other?:
            throw InstructionSourceError(kind: .badValue, message: "\(forcingVariable)=\(other) is not a source of instruction counts; use pmu or callgrind, or unset it to choose by whether this machine has a PMU")
        }
    }
}

extension InstructionSource {
    /// The counted trials of the `pmu` source, except `timingDependent` scenarios'; nil for callgrind.
    package func pmuTrials(timingDependent: Set<String>) -> PMUTrials? {
        guard case .pmu(let event) = self else { return nil }
        return PMUTrials(event: event, timingDependent: timingDependent)
    }
}

/// Whether a perf counter opens here: the kernel's answer, or a test's.
package protocol PerfCounterProbe: Sendable {
    /// Why a counter of `event` (this thread, user space only) cannot be opened
    /// (`ENOENT (No such file or directory)`); nil when it opens and reads.
    func failure(opening event: PerfCounterEvent) -> String?
}

/// Asks the kernel: opens a counter of the event in this process, reads it and closes it.
package struct KernelPerfCounterProbe: PerfCounterProbe {
    /// The kernel's probe.
    package init() {}

    package func failure(opening event: PerfCounterEvent) -> String? {
        let failure = strain_perf_event_opens(event.type, event.config)
        guard failure != 0 else { return nil }
        let name = [ENOENT: "ENOENT", EACCES: "EACCES", EPERM: "EPERM", EOPNOTSUPP: "EOPNOTSUPP", EINVAL: "EINVAL", ENOSYS: "ENOSYS"][failure] ?? "errno \(failure)"
        return "\(name) (\(String(cString: strerror(failure))))"
    }
}

/// Why no source of instruction counts can be chosen.
package struct InstructionSourceError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package enum Kind: Sendable {
        /// A value of `STRAIN_INSTRUCTIONS_SOURCE` or of the test switch that is not one.
        case badValue
        /// `pmu` forced where the machine's kernel refuses the counter.
        case unavailable
    }

    /// What went wrong.
    package var kind: Kind
    /// The variable, its value, why and what to do.
    package var message: String
    package var description: String { message }
}
