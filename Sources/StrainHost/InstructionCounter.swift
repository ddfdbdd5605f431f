internal import CStrainProbe
import Foundation
import StrainKit

/// The child's side of the instruction count: the runner starts a counted trial under
/// Valgrind's callgrind with instrumentation off and `STRAIN_INSTRUCTIONS=callgrind`;
/// the host switches it on for the scenario's measured work alone
/// (CStrainProbe/strain_instr.c) and callgrind writes that part to its output file,
/// which the runner reads after the trial.
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

    /// Leaves the calling harness thread out of the count.
    static func excludeThread() { strain_instr_exclude_thread() }

    /// Under Valgrind, where the kernel's parent-death signal cannot be asked for: a
    /// harness thread, left out of the count, that kills the trial's process group when
    /// the runner that started it is gone (checked every 200 ms).
    static func watchParent(_ parent: Int32) {
        guard parent > 0 else { return }
        _ = HarnessThread.start("strain.parent-watch", stackBytes: 256 * 1024) {
            strain_instr_exclude_thread()
            while getppid() == parent { usleep(200_000) }
            kill(0, SIGKILL)
            _exit(137)
        }
    }
}
