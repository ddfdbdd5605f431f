/// The names a parent and its `_trial` child agree on: environment variables and
/// the descriptors they carry, each spelled here only.
package enum ChildEnvironment {
    /// The runner's pid, checked by the child against `getppid()` after it asks
    /// for a parent-death signal.
    package static let parentPID = "STRAIN_PARENT_PID"
    /// The fd of the shared heartbeat block.
    package static let heartbeatDescriptor = "STRAIN_HEARTBEAT_FD"
    /// The fd of the result pipe in the child.
    package static let resultDescriptor: Int32 = 3
    /// The fd the shared heartbeat block gets in the child.
    package static let sharedDescriptor: Int32 = 4
}
