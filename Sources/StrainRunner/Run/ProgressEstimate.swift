/// The time a run has left, from how long its trials took: the mean of the
/// trials so far blended with the mean of the last few, so a run whose later
/// trials are slower (stalls waiting out their threshold) or faster corrects its
/// estimate as they finish.
package struct ProgressEstimate: Sendable {
    private var finishes: [Double] = []
    /// Trials the recent mean looks back over.
    package var window = 8

    package init() {}

    /// Notes that a trial finished `elapsedSeconds` after the run started.
    package mutating func finished(atElapsed elapsedSeconds: Double) {
        finishes.append(elapsedSeconds)
    }

    /// Seconds left for `remaining` trials; nil before the first trial finished.
    package func secondsLeft(remaining: Int) -> Double? {
        guard let last = finishes.last, !finishes.isEmpty else { return nil }
        let overall = last / Double(finishes.count)
        let recentCount = min(window, finishes.count)
        let recentStart = finishes.count > recentCount ? finishes[finishes.count - recentCount - 1] : 0
        let recent = (last - recentStart) / Double(recentCount)
        return Double(remaining) * (overall + recent) / 2
    }
}
