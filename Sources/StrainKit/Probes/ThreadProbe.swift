import Foundation
import CStrainProbe

/// The harness's view of the thread it is on: alternate signal stack, stack
/// bounds and how deep the stack went.
package enum ThreadProbe {
    /// Why a thread could not be prepared for scenario work.
    package struct PreparationError: Error, Sendable, CustomStringConvertible {
        package var errno: Int32
        package var description: String { "could not prepare the thread for scenario work (errno \(errno))" }
    }

    /// Prepares the calling thread (alternate signal stack, bounds) and forgets
    /// what its stack held before, so `finish` measures only the work to come.
    package static func begin() throws(PreparationError) {
        let status = strain_thread_prepare()
        guard status == 0 else { throw PreparationError(errno: status) }
        strain_thread_reset_high_water()
    }

    /// What the calling thread measured since `begin`.
    package static func finish() -> ThreadReport {
        var bounds = strain_stack_bounds()
        _ = strain_thread_bounds(&bounds)
        return ThreadReport(
            tid: Int(strain_thread_id()),
            stackSizeBytes: Int(bounds.high - bounds.low),
            stackHighWaterBytes: strain_thread_stack_high_water()
        )
    }
}

/// Starts a `Thread` whose name the kernel knows too (Foundation on Linux keeps
/// a name set before `start()` to itself): dumps and /proc show it.
public enum NamedThread {
    /// Starts `body` on a new thread called `name` (cut to the kernel's 15
    /// characters), with `stackBytes` of stack when given, an alternate signal
    /// stack installed first so a fault on it is caught and traced.
    @discardableResult
    public static func start(_ name: String, stackBytes: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            _ = strain_set_thread_name(name)
            // An alternate signal stack from the start: a dump or a fault that
            // reaches an idle worker must not run on a small stack's last bytes.
            _ = strain_thread_prepare()
            body()
        }
        thread.name = name
        if let stackBytes { thread.stackSize = stackBytes }
        thread.start()
        return thread
    }
}
