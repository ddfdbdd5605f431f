/// The one rule that calls a trial starved or deadlocked, used by the child's
/// `Watchdog` as it watches and by the parent's `OutcomeClassifier` at a deadline
/// the child did not report by.
package enum StallVerdict: Sendable, Equatable {
    /// Units of work wait for a thread that never comes.
    case starved(waiting: Int, queued: Int)
    /// No unit waits for a thread, yet every thread holding work waits with no timeout.
    case deadlocked

    /// What the evidence says, or nil when it is not a stall.
    ///
    /// - Parameters:
    ///   - pending: units queued and not finished (`queued - finished`).
    ///   - waitingForThread: units queued and not started (`queued - started`).
    ///   - silentSeconds: time since the last heartbeat event.
    ///   - thresholdSeconds: the suite's `stall:`.
    ///   - anyHolderRunning: a thread holding work is on a CPU (then it is slow, not stuck).
    ///   - holdersInUntimedWait: every thread holding work waits with no timeout (and there is one).
    ///   - othersQuiet: no other thread runs or sleeps (one of them could still wake the holders).
    package static func judge(pending: Int, waitingForThread: Int, silentSeconds: Double, thresholdSeconds: Double,
                             anyHolderRunning: Bool, holdersInUntimedWait: Bool, othersQuiet: Bool, queued: Int) -> StallVerdict? {
        guard pending > 0, silentSeconds >= thresholdSeconds, !anyHolderRunning else { return nil }
        if waitingForThread > 0 { return .starved(waiting: waitingForThread, queued: queued) }
        if holdersInUntimedWait && othersQuiet { return .deadlocked }
        return nil
    }
}
