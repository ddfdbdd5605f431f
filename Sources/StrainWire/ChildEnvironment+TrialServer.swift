/// The names the runner and its trial server (and the `_trial` child's watchdog) agree on.
extension ChildEnvironment {
    /// The fd of the trial server's socket to its runner.
    package static let trialServerSocketDescriptor: Int32 = 3
    /// `STRAIN_TRIAL_SERVER=refuse` makes the trial server refuse to start: the runner then spawns every trial.
    package static let trialServerRefuse = "STRAIN_TRIAL_SERVER"
    /// Set beside `LD_BIND_NOW=1` when the runner added it for the trial server, so its copies drop both.
    package static let trialServerBindNow = "STRAIN_TRIAL_SERVER_BIND_NOW"
    /// The counted trial server's folder (the stripped copy and callgrind's outputs),
    /// which its watcher removes when the runner dies before it could (SIGKILL).
    package static let countedServerFolder = "STRAIN_COUNTED_SERVER_FOLDER"
    /// Set when callgrind runs with its instrumentation on from the start (the counted
    /// trial server): its copies count without switching it (CStrainProbe/strain_instr.c).
    package static let callgrindInstrumented = "STRAIN_CALLGRIND_INSTRUMENTED"
    /// The child's watchdog thread's name (as /proc shows it: at most 15 characters),
    /// which the parent leaves out of the threads a stall is blamed on.
    package static let watchdogThreadName = "strain.watchdog"
    /// `STRAIN_WATCHDOG=off` leaves a trial's stalls to the parent's deadline (with
    /// ptrace and the shared heartbeat): for debugging the watchdog, and testing that path.
    package static let watchdogSwitch = "STRAIN_WATCHDOG"
}
