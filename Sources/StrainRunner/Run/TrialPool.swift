internal import CStrainProbe
import Dispatch
import Foundation
import StrainKit
import StrainWire
import Synchronization

/// Runs trials `jobs` at a time, each on a worker thread of its own, and hands
/// every finished record back to the calling thread in the order they finish,
/// so the journal and the progress line stay on one thread.
///
/// A worker takes the next trial in plan order when its last one ends; none is
/// taken after a stop signal or after `finished` threw. Workers are threads of
/// their own (not GCD's), and none exits before every trial has ended: a trial's
/// parent-death signal is tied to the thread that started it (a spawned trial),
/// or that started its trial server (a server a worker restarted), and must not
/// fire while the run goes on.
struct TrialPool {
    var jobs: Int
    var supervisor: TrialSupervisor

    /// Runs `specs`; `finished` hears each record (nil: a trial killed by a stop
    /// signal). Returns the most trials that ran at once. Rethrows what `finished`
    /// threw, after the trials in flight have ended.
    func run(_ specs: [TrialSpec], finished: (TrialRecord?) throws -> Void) throws -> Int {
        let shared = Shared(workers: min(jobs, specs.count))
        for _ in 0..<min(jobs, specs.count) {
            let supervisor = supervisor
            let thread = Thread {
                // Foundation keeps a Thread's name to itself on Linux: the kernel's name
                // makes the workers visible (ps -L, /proc/PID/task/*/comm, the tests).
                _ = strain_set_thread_name("strain.job")
                while let index = shared.take(count: specs.count) {
                    let record = supervisor.runUnlessStopped(specs[index])
                    shared.deliver(record)
                }
                shared.retire()
                shared.waitForRelease()
            }
            thread.name = "strain.job"
            thread.start()
        }
        var failure: (any Error)?
        while let delivery = shared.next() {
            guard failure == nil else { continue }
            do {
                try finished(delivery)
            } catch {
                failure = error
                shared.abandon()
            }
        }
        shared.release(workers: min(jobs, specs.count))
        if let failure { throw failure }
        return shared.peak
    }

    /// What the workers and the calling thread share.
    private final class Shared: Sendable {
        private struct State {
            var next = 0
            var running = 0
            var peak = 0
            var workers: Int
            var abandoned = false
            /// Finished and not yet handed over; nil for a trial a stop signal killed.
            var delivered: [TrialRecord?] = []
        }

        private let state: Mutex<State>
        /// One signal per delivery and per retired worker.
        private let signal = DispatchSemaphore(value: 0)
        /// Signalled once per worker when every trial has ended: then the workers exit.
        private let released = DispatchSemaphore(value: 0)

        init(workers: Int) { state = Mutex(State(workers: workers)) }

        var peak: Int { state.withLock { $0.peak } }

        /// The index of the next trial to run, or nil when there is none to take.
        func take(count: Int) -> Int? {
            state.withLock { state -> Int? in
                guard state.next < count, !state.abandoned, RunnerSignals.stopSignal == nil else { return nil }
                defer { state.next += 1 }
                state.running += 1
                state.peak = max(state.peak, state.running)
                return state.next
            }
        }

        func deliver(_ record: TrialRecord?) {
            state.withLock {
                $0.running -= 1
                $0.delivered.append(record)
            }
            signal.signal()
        }

        func retire() {
            state.withLock { $0.workers -= 1 }
            signal.signal()
        }

        func abandon() { state.withLock { $0.abandoned = true } }

        func waitForRelease() { released.wait() }

        func release(workers: Int) {
            for _ in 0..<workers { released.signal() }
        }

        /// The next finished record, waiting for one; `.none` once every worker has retired.
        func next() -> TrialRecord?? {
            while true {
                let taken = state.withLock { state -> (TrialRecord??, Bool) in
                    if !state.delivered.isEmpty { return (.some(state.delivered.removeFirst()), false) }
                    return (nil, state.workers == 0)
                }
                if let record = taken.0 { return record }
                if taken.1 { return nil }
                signal.wait()
            }
        }
    }
}
