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

    /// Prepares the calling thread (alternate signal stack, bounds, the fault
    /// handler's fast walk unless `warmingFastWalk` is false) and forgets what its
    /// stack held before, so `finish` measures only the work to come.
    package static func begin(warmingFastWalk: Bool = true) throws(PreparationError) {
        let status = strain_thread_prepare()
        guard status == 0 else { throw PreparationError(errno: status) }
        // Before the reset: the warm-up's own stack use is forgotten with the rest.
        // A thread it fails on (or skips) is walked with unw_step, and its record says so.
        if warmingFastWalk { _ = strain_thread_warm_fast_walk() }
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

/// A thread of the harness itself (a trial's watchdog), started with
/// `pthread_create` rather than Foundation's `Thread`: it needs none of what
/// `Thread` adds (its object, `Thread.current`, naming it twice), which a copy of
/// the trial server pays for on every trial. Scenario work stays on `Thread`s
/// (`NamedThread`), the thread kind users run, and so does a trial's preparation
/// thread, which does Foundation's first-use work for threads before them.
package enum HarnessThread {
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a detached thread called `name` with `stackBytes` of stack and
    /// an alternate signal stack installed first. Returns 0 or an errno value.
    @discardableResult
    package static func start(_ name: String, stackBytes: Int, _ body: @escaping @Sendable () -> Void) -> Int32 {
        var attributes = pthread_attr_t()
        var status = pthread_attr_init(&attributes)
        guard status == 0 else { return status }
        defer { pthread_attr_destroy(&attributes) }
        status = pthread_attr_setstacksize(&attributes, stackBytes)
        guard status == 0 else { return status }
        status = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        guard status == 0 else { return status }
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        status = pthread_create(&thread, &attributes, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            _ = strain_set_thread_name(start.name)
            _ = strain_thread_prepare()
            start.body()
            return nil
        }, context)
        if status != 0 { Unmanaged<Start>.fromOpaque(context).release() }
        return status
    }
}
