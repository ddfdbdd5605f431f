import CStrainProbe
import Foundation
import Synchronization

/// A test's closure on a `.thread(stackBytes:)` trial gets the stack room a plain
/// `Thread` of that size gives its closure, not that less the harness's own frames.
///
/// Between a trial thread's start and the closure sit the harness's frames (the
/// hand-off, the measurements, the allocation window): 1,872 bytes more than
/// Foundation's `Thread` puts above its closure, in a debug build here, about 7
/// levels of a recursive parser. So the trial thread is started `allowance` larger,
/// and just before the closure the difference is set aside, untouched: the closure
/// starts exactly as far above the stack's end as a plain thread's closure does
/// (to 16 bytes). Its records report the size asked for, and a high water counted
/// from where a plain thread's top would be.
///
/// Only what asks for it gets it (``ScenarioContext/givesPlainThreadRoom``, set by
/// StrainTesting's closure scenario, which calls the test's closure through
/// ``call(_:)``): a scenario type's work keeps the harness's frames above it, as its
/// recorded figures always had.
package enum PlainThreadRoom {
    /// What a trial thread is started with beyond the size asked for: far more than
    /// the harness's frames take, in any build.
    package static let allowance = 64 << 10

    /// How a plain `Thread` of some size stands when its closure starts.
    package struct Plain: Sendable, Equatable {
        /// The stack's size as its bounds report it.
        package var sizeBytes: Int
        /// Bytes between the stack's top and a call made from the closure's first line.
        package var usedBytes: Int
        /// What the closure has below it.
        package var roomBytes: Int { sizeBytes - usedBytes }
    }

    private static let measured = Mutex<[Int: Plain]>([:])
    /// The one thread armed in this process, and the room to leave its closure.
    private static let armed = Mutex<(thread: pthread_t, roomBytes: Int)?>(nil)

    /// The measuring closure: a plain thread's whole closure when measuring one, the
    /// probe of a trial's call. The same closure both ways, so the same frame.
    private static let note: @Sendable () -> Void = { strain_stack_note() }

    /// A plain `Thread` of `stackBytes`, measured once per size in this process by
    /// starting one; nil if it could not be measured or glibc gave it another size
    /// (a size below its minimum).
    package static func plain(stackBytes: Int) -> Plain? {
        // Held while measuring: one note at a time.
        measured.withLock { measured in
            if let known = measured[stackBytes] { return known }
            let plain = measure(stackBytes: stackBytes)
            if let plain { measured[stackBytes] = plain }
            return plain
        }
    }

    private static func measure(stackBytes: Int) -> Plain? {
        let thread = Thread(block: note)
        thread.stackSize = stackBytes
        thread.start()
        // `note` is the thread's whole closure: its end says the note is written.
        let deadline = DispatchTime.now() + .seconds(10)
        while !thread.isFinished {
            guard DispatchTime.now() < deadline else { return nil }
            usleep(50)
        }
        var used = 0, room = 0, size = 0
        strain_stack_noted(&used, &room, &size)
        guard used > 0, size > used, size <= stackBytes else { return nil }
        return Plain(sizeBytes: size, usedBytes: used)
    }

    /// On a trial thread started `allowance` larger than `plain`'s: its records
    /// report `plain`'s size, and the next ``call(_:)`` on it leaves its closure
    /// `plain`'s room. False if the thread's bounds could not be set.
    @discardableResult
    package static func arm(as plain: Plain) -> Bool {
        guard strain_thread_report_size(plain.sizeBytes) == 0 else { return false }
        armed.withLock { $0 = (pthread_self(), plain.roomBytes) }
        return true
    }

    /// A test's closure as a trial calls it, with a probe of the same shape; both made
    /// before the trial's allocation window opens, so calling them allocates nothing.
    package struct Call: Sendable {
        let body: @Sendable () throws -> Void
        /// Called as `body` is, it notes the room a call from its first line has.
        let probe: @Sendable () throws -> Void

        /// `body` itself.
        package init(_ body: @escaping @Sendable () throws -> Void) {
            self.body = body
            probe = PlainThreadRoom.note
        }

        /// `body(argument)`: the test's closure is `body`, which starts where a plain
        /// thread's closure would.
        package init<Argument: Sendable>(_ argument: Argument, _ body: @escaping @Sendable (Argument) throws -> Void) {
            self.body = Self.bound(argument, body)
            probe = Self.bound(argument) { _ in strain_stack_note() }
        }

        /// One closure literal for both: the frame between the call and `body` is the same.
        private static func bound<Argument: Sendable>(_ argument: Argument, _ body: @escaping @Sendable (Argument) throws -> Void)
            -> @Sendable () throws -> Void {
            { try body(argument) }
        }
    }

    /// Calls the test's closure with a plain thread's room if this thread is armed
    /// (once), directly otherwise.
    package static func call(_ call: Call) throws {
        guard let room = takeArmed() else { return try call.body() }
        // Where a closure called this way starts, nothing set aside; then the same
        // call with the difference set aside.
        try through(settingAside: 0, call.probe)
        var seen = 0
        strain_stack_noted(nil, &seen, nil)
        try through(settingAside: max(0, seen - room), call.body)
    }

    private static func takeArmed() -> Int? {
        armed.withLock { armed in
            guard let now = armed, pthread_equal(now.thread, pthread_self()) != 0 else { return nil }
            armed = nil
            return now.roomBytes
        }
    }

    private struct Invocation {
        var body: () throws -> Void
        var failure: (any Error)?
    }

    /// `body` called from below `bytes` set aside on this thread's stack.
    private static func through(settingAside bytes: Int, _ body: @escaping () throws -> Void) throws {
        var invocation = Invocation(body: body, failure: nil)
        withUnsafeMutablePointer(to: &invocation) { pointer in
            strain_call_below(bytes, { raw in
                let invocation = raw!.assumingMemoryBound(to: Invocation.self)
                do { try invocation.pointee.body() } catch { invocation.pointee.failure = error }
            }, pointer)
        }
        if let failure = invocation.failure { throw failure }
    }
}
