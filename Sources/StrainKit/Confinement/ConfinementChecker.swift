import CStrainProbe
import Dispatch
import Foundation
import Synchronization

/// Catches accesses to objects from a queue or thread that does not own them,
/// as Core Data's concurrency debug assertions do for managed objects touched
/// off their context's queue, but records each one (with the stack of the
/// access and the stack that confined the object) instead of trapping. A trial
/// whose work made any ends `confinementViolated`.
///
/// ```swift
/// let checker = ConfinementChecker(context: context)
/// let contextQueue = checker.owningQueue(label: "app.moc")
/// let note = contextQueue.sync { checker.confine(Note(), to: contextQueue) }
/// contextQueue.sync { note.read("title") { $0.title } }   // fine
/// note.read("title") { $0.title }                         // recorded: wrong queue
/// ```
///
/// Code is on a queue's side when it runs inside that queue's `OwningQueue.sync`
/// or `async` (as managed objects are used inside `perform`/`performAndWait`):
/// those set a thread-local owner token around their block, and each checked
/// access compares one thread-local word when nothing is wrong
/// (`dispatch_get_specific`, the other way to ask, cost 50–70 ns an access here).
/// Stacks are walked only to confine an object and at a violation.
public final class ConfinementChecker: Sendable {
    let log: ConfinementLog
    /// Owning queues' tokens, from 1; 0 means no owner.
    private let nextToken = Atomic<Int>(1)

    /// A checker that records into the trial's context.
    public convenience init(context: ScenarioContext) {
        self.init(log: context.confinement)
    }

    /// A checker that records into `log` (a test's own, for instance).
    package init(log: ConfinementLog) {
        self.log = log
    }

    /// A serial queue that owns objects (a managed object context's queue).
    public func owningQueue(label: String, qos: DispatchQoS = .default) -> OwningQueue {
        OwningQueue(queue: DispatchQueue(label: label, qos: qos), token: UInt(nextToken.add(1, ordering: .relaxed).oldValue))
    }

    /// Confines `value` to `owner`: every access through the result is checked
    /// against it. Call it on the owner, where the object is created.
    public func confine<Value>(_ value: Value, to owner: OwningQueue, name: String? = nil) -> Confined<Value> {
        Confined(value, owner: .queue(owner.token, owner.queue.label), name: name ?? String(describing: Value.self), checker: self)
    }

    /// Confines `value` to the calling thread.
    public func confineToCurrentThread<Value>(_ value: Value, name: String? = nil) -> Confined<Value> {
        let tid = Int(strain_thread_id_cached())
        return Confined(value, owner: .thread(tid), name: name ?? String(describing: Value.self), checker: self)
    }
}

/// A serial queue whose objects a `ConfinementChecker` checks. Run work on it
/// with `sync` and `async`, as with a context's `performAndWait` and `perform`:
/// only code inside them counts as the queue's own.
public struct OwningQueue: Sendable {
    let queue: DispatchQueue
    let token: UInt

    /// Runs `body` on the queue and waits for it.
    public func sync<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync {
            let previous = strain_confinement_swap(token)
            defer { _ = strain_confinement_swap(previous) }
            return try body()
        }
    }

    /// Runs `body` on the queue later.
    public func async(_ body: @escaping @Sendable () -> Void) {
        let token = token
        queue.async {
            let previous = strain_confinement_swap(token)
            body()
            _ = strain_confinement_swap(previous)
        }
    }

    /// The queue's label, as violations name their owner.
    public var label: String { queue.label }
}

/// Who owns a confined object.
enum ConfinementOwner: Sendable {
    case queue(UInt, String)
    case thread(Int)

    var description: String {
        switch self {
        case .queue(_, let label): "queue \(label)"
        case .thread(let tid): "thread \(tid)"
        }
    }
}

/// An object that belongs to one queue or thread, every access checked.
///
/// `@unchecked Sendable`: a confined object exists to be handed across threads so
/// that a wrong-thread access can be caught; the checker records every such access
/// (the owner-side accesses are serialised by the owning queue). A scenario that
/// makes wrong-thread accesses makes them while the owner is idle, so they are
/// violations of confinement but not data races.
public final class Confined<Value>: @unchecked Sendable {
    /// The value, behind a pointer: a stored `var` of a class would pay Swift's
    /// dynamic exclusivity check on every access, more than the confinement check.
    @usableFromInline let storage: UnsafeMutablePointer<Value>
    private let owner: ConfinementOwner
    /// The owning queue's token (0 for a thread owner) and the owning thread's id
    /// (0 for a queue owner): the inlined test reads these two words only.
    @usableFromInline let ownerToken: UInt
    @usableFromInline let ownerThread: Int32
    private let name: String
    private let checker: ConfinementChecker
    /// Where the object was confined: the owner's half of a violation's story.
    private let confinedAt: [UInt]

    init(_ value: Value, owner: ConfinementOwner, name: String, checker: ConfinementChecker) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
        self.owner = owner
        switch owner {
        case .queue(let token, _): (ownerToken, ownerThread) = (token, 0)
        case .thread(let tid): (ownerToken, ownerThread) = (0, Int32(tid))
        }
        self.name = name
        self.checker = checker
        self.confinedAt = ConfinementLog.currentStack()
    }

    /// Whether the calling code runs on the owner: one thread-local load (a
    /// queue's token) or a cached thread id (a thread).
    @inlinable
    var isOnOwner: Bool {
        if ownerToken != 0 { return strain_confinement_current() == ownerToken }
        return strain_thread_id_cached() == ownerThread
    }

    /// Reads through the object; `access` names the access in a violation (`title`).
    @inlinable
    public func read<R>(_ access: @autoclosure () -> String, _ body: (Value) throws -> R) rethrows -> R {
        if !isOnOwner { violated("\(access()) (read)") }
        return try body(storage.pointee)
    }

    /// Changes the object.
    @inlinable
    public func write<R>(_ access: @autoclosure () -> String, _ body: (inout Value) throws -> R) rethrows -> R {
        if !isOnOwner { violated("\(access()) (write)") }
        return try body(&storage.pointee)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @usableFromInline @inline(never)
    func violated(_ access: String) {
        checker.log.add(object: name, access: access, owner: owner.description, confinedAt: confinedAt)
    }
}

/// The violations a trial's checkers caught, with raw stacks; the parent names the frames.
/// The harness keeps one per trial (checkers made with `init(context:)` record there).
public final class ConfinementLog: Sendable {
    /// Distinct violations kept (by object, access and stack); past this, only counted.
    package static let distinctCap = 64
    /// Frames kept of each stack.
    static let frameCap = 128

    private let state = Mutex<(violations: [RawConfinementViolation], total: Int)>(([], 0))

    package init() {}

    func add(object: String, access: String, owner: String, confinedAt: [UInt]) {
        let stack = Self.currentStack()
        let tid = Int(strain_thread_id())
        let name = ThreadName.current
        state.withVisibleLock { state in
            state.total += 1
            if let index = state.violations.firstIndex(where: { $0.object == object && $0.access == access && $0.accessStack == stack }) {
                state.violations[index].count += 1
            } else if state.violations.count < Self.distinctCap {
                state.violations.append(RawConfinementViolation(object: object, access: access, owner: owner, threadID: tid,
                                                                threadName: name, count: 1, accessStack: stack, ownerStack: confinedAt))
            }
        }
    }

    /// Every distinct violation so far.
    package var violations: [RawConfinementViolation] { state.withVisibleLock { $0.violations } }
    /// Every violating access so far, repeats included.
    package var total: Int { state.withVisibleLock { $0.total } }

    /// The calling thread's stack, innermost first, without this function's own frame.
    static func currentStack() -> [UInt] {
        var ips = [UInt](repeating: 0, count: frameCap + 1)
        let count = ips.withUnsafeMutableBufferPointer { strain_capture_stack($0.baseAddress, $0.count) }
        return Array(ips.prefix(count).dropFirst())
    }
}

/// The calling thread's name as the kernel knows it.
enum ThreadName {
    static var current: String {
        let text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
