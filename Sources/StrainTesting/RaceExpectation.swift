import Foundation
import StrainKit
import Testing

/// Runs `body` on `workers` threads at once, as a Strain trial in an isolated child,
/// and records an issue at the call unless ThreadSanitizer saw no race there.
///
/// ```swift
/// @Test func theCacheIsSafeFromEightThreads() async {
///     let cache = Cache()
///     await expectNoRace(workers: 8) { worker in
///         for key in 0..<1_000 { cache.store(key, for: worker) }
///     }
/// }
/// ```
///
/// Races are seen only in a test binary built with ThreadSanitizer:
/// `swift test --sanitize=thread`. There a race fails the test with each race's two
/// accesses (the thread, the kind of access and the frames with file:line) and the
/// trial's run.json attached; code guarded by what ThreadSanitizer sees passes
/// (`NSLock`, dispatch queues and semaphores, pthread mutexes). Swift's `Mutex` on Linux
/// is not wholly seen: under contention it waits and wakes in Synchronization's own
/// library, which is not instrumented, and a `Mutex` taken by 4 workers × 1,000 times
/// was reported as a race in 1 of 3 runs of the fixture. In a plain build the closure
/// still runs on the workers (a crash or a throw fails the test) and a warning says
/// that races were not checked.
///
/// - Parameters:
///   - workers: how many threads run `body` at once, each with its index (0..<workers),
///     released together from a barrier.
///   - name: what the trial is called in its record; give each call in a loop or a
///     parameterized test its own, so the re-run child finds it.
///   - profile: what the child emulates (`.linux`, `.ios`, `.macos`).
///   - timeout: past it the child is killed and the trial is `timedOut` (a sanitized
///     binary runs 5–15 times slower).
///   - sourceLocation: where a race or a failure is reported: the call, by default.
///   - body: the code under test, run by every worker with its index.
@discardableResult
public func expectNoRace(workers: Int = 4, _ name: String? = nil, profile: Profile = .linux, timeout: Duration = .seconds(120),
                         sourceLocation: Testing.SourceLocation = #_sourceLocation,
                         _ body: @escaping @Sendable (_ worker: Int) throws -> Void) async -> StrainVerdict {
    precondition((1...1_024).contains(workers), "expectNoRace needs 1 to 1,024 workers, not \(workers)")
    let verdict = await trial(name, on: .thread(stackBytes: 8 << 20), profile: profile, timeout: timeout, stall: nil, namingSites: false,
                              sourceLocation: sourceLocation) {
        try runTogether(workers, body)
    }
    guard verdict.ran else { return verdict }
    if failUnlessCompleted(verdict, sourceLocation: sourceLocation), !RaceDetector.isActive {
        Issue.record(Comment(rawValue: "races were not checked: this test binary is not built with ThreadSanitizer (run `swift test --sanitize=thread`)"),
                     severity: .warning, sourceLocation: sourceLocation)
    }
    return verdict
}

/// Runs `body(0..<count)` on `count` threads of 8 MiB released together, waits for
/// all, and rethrows the first error one threw.
func runTogether(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let ready = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    let firstError = ErrorSlot()
    for worker in 0..<count {
        ready.enter()
        finished.enter()
        let thread = Thread {
            ready.leave()
            go.wait()
            do { try body(worker) } catch { firstError.keep(error) }
            finished.leave()
        }
        thread.stackSize = 8 << 20
        thread.name = "strain.worker-\(worker)"
        thread.start()
    }
    ready.wait()
    for _ in 0..<count { go.signal() }
    finished.wait()
    if let error = firstError.error { throw error }
}

/// The first error a worker threw.
private final class ErrorSlot: @unchecked Sendable {  // @unchecked Sendable: `stored` is read and written under `lock` only
    private let lock = NSLock()
    private var stored: (any Error)?

    func keep(_ error: any Error) { lock.withLock { if stored == nil { stored = error } } }
    var error: (any Error)? { lock.withLock { stored } }
}
