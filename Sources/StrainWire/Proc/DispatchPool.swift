/// What libdispatch does with a global queue's pool on Linux, as the in-process watchdog
/// and `strain exec --stall` both judge it.
package enum DispatchPool {
    /// How long a pool whose workers are all blocked is watched for new ones before it is
    /// called deadlocked: libdispatch starts a worker about once a second while work waits
    /// on its queue and every worker is blocked.
    package static let growthWindowSeconds = 2.5
    /// The most workers libdispatch starts for a global queue (measured: 300 blocked items
    /// on `DispatchQueue.global()` grew the pool one thread a second to 255, and no further).
    package static let workerLimit = 255
}
