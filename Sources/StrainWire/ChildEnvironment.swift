/// The names a parent and its `_trial` child agree on: environment variables and
/// the descriptors they carry, each spelled here only.
package enum ChildEnvironment {
    /// The runner's pid, checked by the child against `getppid()` after it asks
    /// for a parent-death signal.
    package static let parentPID = "STRAIN_PARENT_PID"
    /// A trial's spec as JSON, for a child that is not `strain _trial` (a test
    /// process re-run for one expectation, `StrainTesting`), where argv is its own.
    package static let trialSpec = "STRAIN_TRIAL_SPEC"
    /// Which expectation of the test a re-run test process is to run as the trial
    /// (`StrainTesting`): its place and occurrence, as the parent counted them.
    package static let testingExpectation = "STRAIN_TESTING_EXPECTATION"
    /// The fd of the shared heartbeat block.
    package static let heartbeatDescriptor = "STRAIN_HEARTBEAT_FD"
    /// The fd of the result pipe in the child.
    package static let resultDescriptor: Int32 = 3
    /// The fd the shared heartbeat block gets in the child.
    package static let sharedDescriptor: Int32 = 4
}
