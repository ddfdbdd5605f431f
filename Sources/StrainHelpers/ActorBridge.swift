import Dispatch
import Synchronization

/// Waits on the calling thread for async work: how synchronous code (a worker
/// on a GCD queue or a thread) reaches an actor.
///
/// - Important: The calling thread blocks until `body` finishes. Never call it
///   from Swift concurrency's cooperative pool: with every pool thread waiting
///   here, `body` could never run.
public enum ActorBridge {
    /// Runs `body` in a detached task and returns its value once it is done.
    public static func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let value = await body()
            box.withVisibleLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withVisibleLock { $0 }!
    }
}
