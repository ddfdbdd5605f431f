import Glibc
import Synchronization

/// What ThreadSanitizer is told about locks it cannot see for itself.
///
/// ThreadSanitizer learns that one thread's work happens before another's from the
/// calls it intercepts: pthread mutexes, `NSLock` and `NSRecursiveLock` (over pthread),
/// dispatch queues and semaphores. Swift's `Synchronization.Mutex` locks on Linux with
/// raw futex calls, which it does not intercept, so two threads that take turns under a
/// `Mutex` look to it like a race ("Swift access race" or "data race" inside
/// `withLock`), although the count comes out exact. `Mutex.withVisibleLock(_:)` tells
/// it, at no cost outside a sanitized process; Strain's own harness locks this way, and
/// so does the `Mutex` guard of `contended-collection`.
///
/// In a process without ThreadSanitizer every call here is one load and a branch.
public enum RaceDetector {
    private typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// The runtime's `__tsan_acquire` and `__tsan_release`, when this process has them.
    private static let annotations: (acquire: Annotation, release: Annotation)? = {
        guard let acquire = dlsym(nil, "__tsan_acquire"), let release = dlsym(nil, "__tsan_release") else { return nil }
        return (unsafeBitCast(acquire, to: Annotation.self), unsafeBitCast(release, to: Annotation.self))
    }()

    /// Whether this process runs under ThreadSanitizer.
    public static var isActive: Bool { annotations != nil }

    /// The lock at `address` was just taken: what the thread that last released it did
    /// happens before what this thread does next.
    public static func acquired(_ address: UnsafeMutableRawPointer) {
        annotations?.acquire(address)
    }

    /// The lock at `address` is about to be released: what this thread did so far
    /// happens before what the next thread to take it does.
    public static func releasing(_ address: UnsafeMutableRawPointer) {
        annotations?.release(address)
    }

    /// The address of 8 bytes no thread ever acquires: a release there starts a new
    /// epoch of the calling thread and orders nothing. Never read or written.
    private static let mark = Int(bitPattern: UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8))

    /// Starts a new epoch of this thread's history, ordering nothing: call it now and
    /// then (every few thousand accesses) in a loop that otherwise never synchronises.
    ///
    /// ThreadSanitizer names a race only when it can restore the stack of the earlier
    /// access, and it looks for it from the start of that access's epoch, which a
    /// thread begins at each release. A worker looping for 100,000 operations with no
    /// lock outlives its history, and the race is dropped unreported: the unguarded
    /// array's appends, 8 workers on gcd-global beside two busy loops, were named in
    /// 13 of 16 trials; with an epoch a chunk (`WorkerLoop`, StrainHelpers), in 48 of 48.
    public static func newEpoch() {
        annotations?.release(UnsafeMutableRawPointer(bitPattern: mark))
    }
}

extension Mutex where Value: ~Copyable {
    /// `withLock`, with the lock shown to ThreadSanitizer (``RaceDetector``): the same
    /// exclusion, and in a sanitized process no false race between turns.
    ///
    /// The mutex's own address names the lock: a `Mutex` cannot be copied, so a borrow
    /// of it is its storage (a stored property of a class, or a global), the same for
    /// every thread.
    public borrowing func withVisibleLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            RaceDetector.acquired(address)
            defer { RaceDetector.releasing(address) }
            return try body(&value)
        }
    }
}
