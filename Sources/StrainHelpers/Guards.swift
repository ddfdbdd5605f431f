import Dispatch
import Foundation
import StrainKit
import Synchronization

/// A value that many threads share, and the operations they do on it. Reads
/// do not mutate, so a reader/writer guard may run them side by side.
public protocol GuardedValue: Sendable {
    /// One thing a worker does to the value (`append(id)`, `count`).
    associatedtype Operation: Sendable
    /// The value every guard starts from.
    init()
    /// Whether `operation` changes the value (a write) or only looks (a read).
    static func isWrite(_ operation: Operation) -> Bool
    /// Runs a read; returns what it read, as a number the worker loop keeps.
    func read(_ operation: Operation) -> Int
    /// Runs a write.
    mutating func write(_ operation: Operation)
}

extension GuardedValue {
    /// Runs one operation with the value held exclusively; for a read, returns what it read.
    @inlinable
    public mutating func apply(_ operation: Operation) -> Int {
        if Self.isWrite(operation) {
            write(operation)
            return 0
        }
        return read(operation)
    }
}

/// One way to guard shared state: every guard runs the same operations on the
/// same value; only the locking differs. Each guard's stored value but the unguarded one's opts out of
/// Swift's runtime exclusivity checks (`@exclusivity(unchecked)`): the guard is
/// the exclusivity, and the checks would cost the guards that store a value
/// (every one but `Mutex`, which hands it out `inout`) up to a third of their speed.
public protocol StateGuard<Value>: AnyObject, Sendable {
    /// The value the guard keeps.
    associatedtype Value: GuardedValue
    /// Runs one operation; for a read, returns what it read.
    func perform(_ operation: Value.Operation) -> Int
    /// Runs `body` inside the critical section and, inside it, runs it again
    /// through the guard: a guarded method calling another guarded method.
    /// Throws when the guard refuses the second entry with an error.
    func reenter(_ body: () -> Void) throws
    /// The value once every worker is done.
    func settled() -> Value
}

/// The guards, by the names suites use: declare a guard parameter as
/// `Parameter<GuardKind>("guard", default: .nsLock, help: …)`.
public enum GuardKind: String, CaseIterable, Sendable {
    /// No guard at all: the negative control (concurrent writes corrupt or lose).
    case unguarded
    /// A concurrent queue: reads `sync`, writes `async(flags: .barrier)` (the blog's).
    case rwQueueAsyncBarrier = "rw-queue-async-barrier"
    /// A concurrent queue: reads `sync`, writes `sync(flags: .barrier)`.
    case rwQueueSyncBarrier = "rw-queue-sync-barrier"
    /// A serial queue, `sync` for everything.
    case serialQueue = "serial-queue"
    /// `NSLock` around every operation.
    case nsLock = "NSLock"
    /// `NSRecursiveLock` around every operation.
    case nsRecursiveLock = "NSRecursiveLock"
    /// A default `pthread_mutex_t`.
    case pthreadMutex = "pthread-mutex"
    /// `pthread_rwlock_t`: shared reads, exclusive writes.
    case pthreadRWLock = "pthread-rwlock"
    /// Swift's `Mutex` (Synchronization).
    case mutex = "Mutex"
    /// A test-and-test-and-set spin lock on an `Atomic<Bool>`.
    case spinLock = "spin-lock"
    /// An actor owning the value (``ActorGuard``): its operations are async.
    case actor

    /// Every guard's name.
    public static let names = allCases.map(\.rawValue)

    /// Calls `visitor` with a new guard of this kind around a fresh value, as
    /// its concrete type, so the worker loop is compiled for each guard (an
    /// existential call per operation would cost as much as a lock). Returns
    /// false for `actor`, whose operations are async (see `ActorGuard`).
    @inlinable
    public func open<Visitor: GuardVisitor>(_ visitor: Visitor) throws -> Bool {
        typealias Value = Visitor.Value
        switch self {
        case .unguarded: try visitor.visit(UnguardedState<Value>())
        case .rwQueueAsyncBarrier: try visitor.visit(ReaderWriterQueue<Value>(asyncWrites: true))
        case .rwQueueSyncBarrier: try visitor.visit(ReaderWriterQueue<Value>(asyncWrites: false))
        case .serialQueue: try visitor.visit(SerialQueueState<Value>())
        case .nsLock: try visitor.visit(LockedState<Value, NSLock>(lock: NSLock()))
        case .nsRecursiveLock: try visitor.visit(LockedState<Value, NSRecursiveLock>(lock: NSRecursiveLock()))
        case .pthreadMutex: try visitor.visit(PthreadMutexState<Value>())
        case .pthreadRWLock: try visitor.visit(PthreadRWLockState<Value>())
        case .mutex: try visitor.visit(MutexState<Value>())
        case .spinLock: try visitor.visit(SpinLockState<Value>())
        case .actor: return false
        }
        return true
    }
}

/// Work to do with a guard of a concrete type (see ``GuardKind/open(_:)``).
public protocol GuardVisitor {
    /// The value the guard keeps.
    associatedtype Value: GuardedValue
    /// Does the work with `state`, whose concrete type the compiler knows here.
    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == Value
}

/// A guard that answered a second entry with an error instead of a hang.
public struct GuardRefusal: Error, CustomStringConvertible {
    /// What the guard said.
    public var description: String

    /// A refusal described by `description`.
    public init(description: String) { self.description = description }
}

/// No guard at all: the negative control. Concurrent writers corrupt the
/// collection's storage (glibc aborts: "double free or corruption") or lose updates.
///
/// `@unchecked Sendable` and not safe, on purpose: it is the data race the
/// other guards prevent, shared between threads so the race happens.
@usableFromInline
final class UnguardedState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @usableFromInline init() {}

    // The one guard that keeps Swift's exclusivity checks: it is the negative control,
    // its speed is not compared, and under ThreadSanitizer each operation is then an
    // access to `value` it checks, so every trial names the race (with the checks off it
    // saw only the stdlib's inlined buffer code, and missed the race in 5 of 8 trials).
    @usableFromInline var value = Value()

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        value.apply(operation)
    }

    @inlinable func reenter(_ body: () -> Void) {
        body()
        body()
    }

    @inlinable func settled() -> Value { value }
}

/// The blog's reader/writer queue: a concurrent queue, reads `sync`, writes as barriers.
///
/// `@unchecked Sendable`: `value` is touched only inside blocks on `queue`,
/// reads side by side and writes as barriers, which run alone.
@usableFromInline
final class ReaderWriterQueue<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @usableFromInline let queue = DispatchQueue(label: "strain.contended.rw-queue", attributes: .concurrent)
    @exclusivity(unchecked) @usableFromInline var value = Value()  // touched only on `queue`
    @usableFromInline let asyncWrites: Bool

    @usableFromInline init(asyncWrites: Bool) { self.asyncWrites = asyncWrites }

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        guard Value.isWrite(operation) else { return queue.sync { value.read(operation) } }
        if asyncWrites {
            queue.async(flags: .barrier) { self.value.write(operation) }
        } else {
            queue.sync(flags: .barrier) { value.write(operation) }
        }
        return 0
    }

    @inlinable func reenter(_ body: () -> Void) {
        queue.sync(flags: .barrier) {
            body()
            queue.sync(flags: .barrier) { body() }
        }
    }

    @inlinable func settled() -> Value { queue.sync(flags: .barrier) { value } }
}

/// A serial queue, `sync` for everything.
///
/// `@unchecked Sendable`: `value` is touched only inside blocks on the serial `queue`.
@usableFromInline
final class SerialQueueState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @usableFromInline init() {}

    @usableFromInline let queue = DispatchQueue(label: "strain.contended.serial")
    @exclusivity(unchecked) @usableFromInline var value = Value()  // touched only on `queue`

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        queue.sync { value.apply(operation) }
    }

    @inlinable func reenter(_ body: () -> Void) {
        queue.sync {
            body()
            queue.sync { body() }
        }
    }

    @inlinable func settled() -> Value { queue.sync { value } }
}

/// `NSLock` or `NSRecursiveLock` around every operation.
///
/// `@unchecked Sendable`: `value` is touched only while `lock` is held.
@usableFromInline
final class LockedState<Value: GuardedValue, Lock: NSLocking & Sendable>: StateGuard, @unchecked Sendable {
    @usableFromInline let lock: Lock
    @exclusivity(unchecked) @usableFromInline var value = Value()  // touched only under `lock`

    @usableFromInline init(lock: Lock) { self.lock = lock }

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return value.apply(operation)
    }

    @inlinable func reenter(_ body: () -> Void) {
        lock.lock()
        body()
        lock.lock()
        body()
        lock.unlock()
        lock.unlock()
    }

    @inlinable func settled() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// A default (non-recursive) `pthread_mutex_t`.
///
/// `@unchecked Sendable`: `value` is touched only while `mutex` is held; the
/// mutex itself lives at a fixed address from `init` to `deinit`.
@usableFromInline
final class PthreadMutexState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) @usableFromInline var value = Value()  // touched only under `mutex`

    @usableFromInline init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value.apply(operation)
    }

    @inlinable func reenter(_ body: () -> Void) {
        pthread_mutex_lock(mutex)
        body()
        pthread_mutex_lock(mutex)
        body()
        pthread_mutex_unlock(mutex)
        pthread_mutex_unlock(mutex)
    }

    @inlinable func settled() -> Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }
}

/// `pthread_rwlock_t`: shared for reads, exclusive for writes.
///
/// `@unchecked Sendable`: `value` is read under the shared lock and written
/// under the exclusive one; the lock lives at a fixed address until `deinit`.
@usableFromInline
final class PthreadRWLockState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @usableFromInline let lock: UnsafeMutablePointer<pthread_rwlock_t>
    @exclusivity(unchecked) @usableFromInline var value = Value()  // read under the shared lock, written under the exclusive one

    @usableFromInline init() {
        lock = .allocate(capacity: 1)
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        if Value.isWrite(operation) {
            pthread_rwlock_wrlock(lock)
            value.write(operation)
            pthread_rwlock_unlock(lock)
            return 0
        }
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return value.read(operation)
    }

    @inlinable func reenter(_ body: () -> Void) throws {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        body()
        let status = pthread_rwlock_wrlock(lock)
        guard status == 0 else {
            throw GuardRefusal(description: "pthread_rwlock_wrlock refused the second write lock: \(String(cString: strerror(status)))")
        }
        body()
        pthread_rwlock_unlock(lock)
    }

    @inlinable func settled() -> Value {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return value
    }
}

/// Swift's `Mutex` (Synchronization).
@usableFromInline
final class MutexState<Value: GuardedValue>: StateGuard, Sendable {
    @usableFromInline init() {}

    @usableFromInline let state = Mutex(Value())

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        state.withVisibleLock { $0.apply(operation) }
    }

    @inlinable func reenter(_ body: () -> Void) {
        state.withVisibleLock { _ in
            body()
            state.withVisibleLock { _ in body() }
        }
    }

    @inlinable func settled() -> Value { state.withVisibleLock { $0 } }
}

/// A test-and-test-and-set spin lock on an `Atomic<Bool>`.
///
/// `@unchecked Sendable`: `value` is touched only between a successful
/// acquiring exchange of `held` and its releasing store.
@usableFromInline
final class SpinLockState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @usableFromInline init() {}

    @usableFromInline let held = Atomic<Bool>(false)
    @exclusivity(unchecked) @usableFromInline var value = Value()  // touched only while `held`

    @inlinable func acquire() {
        while true {
            if !held.load(ordering: .relaxed),
               held.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
                return
            }
            // Let the holder run: on 2 cores a spinner can starve the thread it waits for.
            sched_yield()
        }
    }

    @inlinable func release() { held.store(false, ordering: .releasing) }

    @inlinable func perform(_ operation: Value.Operation) -> Int {
        acquire()
        defer { release() }
        return value.apply(operation)
    }

    @inlinable func reenter(_ body: () -> Void) {
        acquire()
        body()
        acquire()
        body()
        release()
        release()
    }

    @inlinable func settled() -> Value {
        acquire()
        defer { release() }
        return value
    }
}

/// An actor owning the value: every operation is a hop onto it.
public actor ActorGuard<Value: GuardedValue> {
    @exclusivity(unchecked) private var value = Value()

    /// A guard around a fresh value.
    public init() {}

    /// Runs one operation; for a read, returns what it read.
    public func perform(_ operation: Value.Operation) -> Int {
        value.apply(operation)
    }

    /// An actor's method calling another of its methods runs inline: no second hold.
    public func reenter(_ body: @Sendable () -> Void) {
        body()
        inner(body)
    }

    private func inner(_ body: @Sendable () -> Void) { body() }

    /// The value once every worker is done.
    public func settled() -> Value { value }
}
