internal import CStrainProbe
internal import CStrainTools
import Foundation
import StrainKit
import StrainRecords
import StrainWire

/// The child's side of the instruction count, by one of two sources.
///
/// Under callgrind: the runner starts a counted trial under Valgrind's callgrind with
/// instrumentation off and `STRAIN_INSTRUCTIONS=callgrind`; the host switches it on for
/// the scenario's measured work alone (CStrainProbe/strain_instr.c) and callgrind writes
/// that part to its output file, which the runner reads after the trial.
///
/// By a perf counter (`STRAIN_INSTRUCTIONS=pmu`, the event in `STRAIN_PERF_EVENT`): each
/// thread counts with a counter of its own while it holds work, and the host reports
/// the total in the trial's metrics (`PMUTrials`).
///
/// Threads are counted while they hold work (strain_instr.c says why).
enum InstructionCounter {
    /// The environment variable that asks for a counted trial, and its value under callgrind.
    static let variable = PMUTrials.variable
    static let callgrind = "callgrind"

    /// How this trial counts: not at all, under callgrind, or by perf counters of an event.
    enum Mode: Equatable {
        case off
        case callgrind
        case perf(PerfCounterEvent)
    }

    /// This trial's mode, from its environment: callgrind only when running under
    /// Valgrind; perf counters only with an event the parent spelled.
    static let mode: Mode = {
        switch getenv(variable).map({ String(cString: $0) }) {
        case callgrind?: return strain_instr_under_valgrind() != 0 ? .callgrind : .off
        case PMUTrials.value?:
            return getenv(PMUTrials.eventVariable).flatMap { PerfCounterEvent(environmentValue: String(cString: $0)) }.map(Mode.perf) ?? .off
        default: return .off
        }
    }()

    /// Whether callgrind was started with its instrumentation on (the counted trial
    /// server: `CallgrindTrials.instrumentedVariable`), so a copy does not switch it.
    static let instrumentedAtStart = getenv(ChildEnvironment.callgrindInstrumented) != nil

    /// Whether a failed parent-death request is Valgrind's doing: it refuses
    /// `PR_SET_PDEATHSIG` (EINVAL), and `watchParent` stands in for it.
    static func excusesParentDeathFailure(_ status: Int32) -> Bool {
        status == EINVAL && strain_instr_under_valgrind() != 0
    }

    /// Starts counting, for every thread.
    static func begin() {
        switch mode {
        case .off: break
        case .callgrind: strain_instr_begin(instrumentedAtStart ? 1 : 0)
        case .perf(let event): strain_perf_begin(event.type, event.config)
        }
    }

    /// Stops counting; under callgrind, has it write the work's counts.
    /// - Returns: the perf counters' total, or why it must not be used; nil under callgrind or off.
    static func end() -> Result<Int, PerfCountError>? {
        switch mode {
        case .off: return nil
        case .callgrind:
            strain_instr_end(instrumentedAtStart ? 1 : 0)
            return nil
        case .perf(let event):
            var total: UInt64 = 0
            let failure = strain_perf_end(&total)
            return failure == 0 ? .success(Int(clamping: total)) : .failure(PerfCountError(event: event, errno: failure))
        }
    }

    /// `counted` (from `end`) into the trial's report: the total in its metrics, or,
    /// where a thread's counter failed, the trial a harness error that says so.
    static func record(_ counted: Result<Int, PerfCountError>?, in report: inout HostReport) {
        switch counted {
        case .success(let total)?: report.metrics.instructions = total
        case .failure(let error)?:
            if report.outcome.kind == .completed { report.outcome = TrialOutcome(kind: .harnessError, message: error.description) }
        case nil: break
        }
    }

    /// Under Valgrind, where the kernel's parent-death signal cannot be asked for: a
    /// watcher process kills the trial's process group when the runner is gone
    /// (`strain_child_watch_parent_by_process`). Not a thread of the trial: a thread
    /// started here ran its start-up inside the measured work in one noop trial of 3
    /// (361,308 instructions twice, 696,624 once), as Valgrind scheduled it.
    static func watchParent(_ parent: Int32) -> Int32 {
        parent > 0 ? strain_child_watch_parent_by_process(parent) : 0
    }
}

/// A perf count that must not be used: a thread of the work could not open or read its counter.
struct PerfCountError: Error, CustomStringConvertible {
    var event: PerfCounterEvent
    var errno: Int32
    var description: String {
        "the instruction count is refused: a thread of the work could not open or read its perf counter (\(event)): \(String(cString: strerror(errno))) (errno \(errno)), so its instructions would be missing from the total"
    }
}
