internal import CStrainProbe
internal import CStrainTools
import Foundation
import StrainKit

/// The child's side of the instruction count: the runner starts a counted trial under
/// Valgrind's callgrind with instrumentation off and `STRAIN_INSTRUCTIONS=callgrind`;
/// the host switches it on for the scenario's measured work alone
/// (CStrainProbe/strain_instr.c) and callgrind writes that part to its output file,
/// which the runner reads after the trial.
/// Threads are counted while they hold work (strain_instr.c says why).
enum InstructionCounter {
    /// The environment variable that asks for a counted trial, and its one value.
    static let variable = "STRAIN_INSTRUCTIONS"
    static let callgrind = "callgrind"

    /// Whether this trial counts instructions: asked for, and running under Valgrind.
    static let counting: Bool = getenv(variable).map { String(cString: $0) } == callgrind && strain_instr_under_valgrind() != 0

    /// Whether a failed parent-death request is Valgrind's doing: it refuses
    /// `PR_SET_PDEATHSIG` (EINVAL), and `watchParent` stands in for it.
    static func excusesParentDeathFailure(_ status: Int32) -> Bool {
        status == EINVAL && strain_instr_under_valgrind() != 0
    }

    /// Starts counting, for every thread.
    static func begin() { if counting { strain_instr_begin() } }

    /// Writes the work's counts and stops counting.
    static func end() { if counting { strain_instr_end() } }

    /// Under Valgrind, where the kernel's parent-death signal cannot be asked for: a
    /// watcher process kills the trial's process group when the runner is gone
    /// (`strain_child_watch_parent_by_process`). Not a thread of the trial: a thread
    /// started here ran its start-up inside the measured work in one noop trial of 3
    /// (361,308 instructions twice, 696,624 once), as Valgrind scheduled it.
    static func watchParent(_ parent: Int32) -> Int32 {
        parent > 0 ? strain_child_watch_parent_by_process(parent) : 0
    }
}
