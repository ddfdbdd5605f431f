import Dispatch
import Foundation
import Synchronization

/// A value that many threads share, and the operations they do on it. Reads
/// do not mutate, so a reader/writer guard may run them side by side.
protocol GuardedValue: Sendable {
    associatedtype Operation: Sendable
    init()
    /// Whether `operation` changes the value (a write) or only looks (a read).
    static func isWrite(_ operation: Operation) -> Bool
    func read(_ operation: Operation) -> Int
    mutating func write(_ operation: Operation)
}

extension GuardedValue {
    /// Runs one operation with the value held exclusively; for a read, returns what it read.
    @inline(__always)
    mutating func apply(_ operation: Operation) -> Int {
        if Self.isWrite(operation) {
            write(operation)
            return 0
        }
        return read(operation)
    }
}

/// One way to guard shared state: every guard runs the same operations on the
/// same value; only the locking differs. Each guard's stored value opts out of
/// Swift's runtime exclusivity checks (`@exclusivity(unchecked)`): the guard is
/// the exclusivity, and the checks would cost the guards that store a value
/// (every one but `Mutex`, which hands it out `inout`) up to a third of their speed.
protocol StateGuard<Value>: AnyObject, Sendable {
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

/// The guards, by the names suites use.
enum GuardKind: String, CaseIterable, Sendable {
    case unguarded
    case rwQueueAsyncBarrier = "rw-queue-async-barrier"
    case rwQueueSyncBarrier = "rw-queue-sync-barrier"
    case serialQueue = "serial-queue"
    case nsLock = "NSLock"
    case nsRecursiveLock = "NSRecursiveLock"
    case pthreadMutex = "pthread-mutex"
    case pthreadRWLock = "pthread-rwlock"
    case mutex = "Mutex"
    case spinLock = "spin-lock"
    case actor

    static let names = allCases.map(\.rawValue)

    /// Calls `visitor` with a new guard of this kind around a fresh value, as
    /// its concrete type, so the worker loop is compiled for each guard (an
    /// existential call per operation would cost as much as a lock). Returns
    /// false for `actor`, whose operations are async (see `ActorGuard`).
    func open<Visitor: GuardVisitor>(_ visitor: Visitor) throws -> Bool {
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

/// Work to do with a guard of a concrete type.
protocol GuardVisitor {
    associatedtype Value: GuardedValue
    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == Value
}

/// A guard that answered a second entry with an error instead of a hang.
struct GuardRefusal: Error, CustomStringConvertible {
    var description: String
}

/// No guard at all: the negative control. Concurrent writers corrupt the
/// collection's storage (glibc aborts: "double free or corruption") or lose updates.
final class UnguardedState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    @exclusivity(unchecked) private var value = Value()

    func perform(_ operation: Value.Operation) -> Int {
        value.apply(operation)
    }

    func reenter(_ body: () -> Void) {
        body()
        body()
    }

    func settled() -> Value { value }
}

/// The blog's reader/writer queue: a concurrent queue, reads `sync`, writes as barriers.
final class ReaderWriterQueue<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    private let queue = DispatchQueue(label: "strain.contended.rw-queue", attributes: .concurrent)
    @exclusivity(unchecked) private var value = Value()  // touched only on `queue`
    private let asyncWrites: Bool

    init(asyncWrites: Bool) { self.asyncWrites = asyncWrites }

    func perform(_ operation: Value.Operation) -> Int {
        guard Value.isWrite(operation) else { return queue.sync { value.read(operation) } }
        if asyncWrites {
            queue.async(flags: .barrier) { self.value.write(operation) }
        } else {
            queue.sync(flags: .barrier) { value.write(operation) }
        }
        return 0
    }

    func reenter(_ body: () -> Void) {
        queue.sync(flags: .barrier) {
            body()
            queue.sync(flags: .barrier) { body() }
        }
    }

    func settled() -> Value { queue.sync(flags: .barrier) { value } }
}

/// A serial queue, `sync` for everything.
final class SerialQueueState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    private let queue = DispatchQueue(label: "strain.contended.serial")
    @exclusivity(unchecked) private var value = Value()  // touched only on `queue`

    func perform(_ operation: Value.Operation) -> Int {
        queue.sync { value.apply(operation) }
    }

    func reenter(_ body: () -> Void) {
        queue.sync {
            body()
            queue.sync { body() }
        }
    }

    func settled() -> Value { queue.sync { value } }
}

/// `NSLock` or `NSRecursiveLock` around every operation.
final class LockedState<Value: GuardedValue, Lock: NSLocking & Sendable>: StateGuard, @unchecked Sendable {
    private let lock: Lock
    @exclusivity(unchecked) private var value = Value()  // touched only under `lock`

    init(lock: Lock) { self.lock = lock }

    func perform(_ operation: Value.Operation) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return value.apply(operation)
    }

    func reenter(_ body: () -> Void) {
        lock.lock()
        body()
        lock.lock()
        body()
        lock.unlock()
        lock.unlock()
    }

    func settled() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// A default (non-recursive) `pthread_mutex_t`.
final class PthreadMutexState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) private var value = Value()  // touched only under `mutex`

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func perform(_ operation: Value.Operation) -> Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value.apply(operation)
    }

    func reenter(_ body: () -> Void) {
        pthread_mutex_lock(mutex)
        body()
        pthread_mutex_lock(mutex)
        body()
        pthread_mutex_unlock(mutex)
        pthread_mutex_unlock(mutex)
    }

    func settled() -> Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }
}

/// `pthread_rwlock_t`: shared for reads, exclusive for writes.
final class PthreadRWLockState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    @exclusivity(unchecked) private var value = Value()  // read under the shared lock, written under the exclusive one

    init() {
        lock = .allocate(capacity: 1)
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func perform(_ operation: Value.Operation) -> Int {
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

    func reenter(_ body: () -> Void) throws {
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

    func settled() -> Value {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return value
    }
}

/// Swift's `Mutex` (Synchronization).
final class MutexState<Value: GuardedValue>: StateGuard, Sendable {
    private let state = Mutex(Value())

    func perform(_ operation: Value.Operation) -> Int {
        state.withLock { $0.apply(operation) }
    }

    func reenter(_ body: () -> Void) {
        state.withLock { _ in
            body()
            state.withLock { _ in body() }
        }
    }

    func settled() -> Value { state.withLock { $0 } }
}

/// A test-and-test-and-set spin lock on an `Atomic<Bool>`.
final class SpinLockState<Value: GuardedValue>: StateGuard, @unchecked Sendable {
    private let held = Atomic<Bool>(false)
    @exclusivity(unchecked) private var value = Value()  // touched only while `held`

    @inline(__always)
    private func acquire() {
        while true {
            if !held.load(ordering: .relaxed),
               held.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
                return
            }
            // Let the holder run: on 2 cores a spinner can starve the thread it waits for.
            sched_yield()
        }
    }

    @inline(__always)
    private func release() { held.store(false, ordering: .releasing) }

    func perform(_ operation: Value.Operation) -> Int {
        acquire()
        defer { release() }
        return value.apply(operation)
    }

    func reenter(_ body: () -> Void) {
        acquire()
        body()
        acquire()
        body()
        release()
        release()
    }

    func settled() -> Value {
        acquire()
        defer { release() }
        return value
    }
}

/// An actor owning the value: every operation is a hop onto it.
actor ActorGuard<Value: GuardedValue> {
    @exclusivity(unchecked) private var value = Value()

    func perform(_ operation: Value.Operation) -> Int {
        value.apply(operation)
    }

    /// An actor's method calling another of its methods runs inline: no second hold.
    func reenter(_ body: @Sendable () -> Void) {
        body()
        inner(body)
    }

    private func inner(_ body: @Sendable () -> Void) { body() }

    func settled() -> Value { value }
}
