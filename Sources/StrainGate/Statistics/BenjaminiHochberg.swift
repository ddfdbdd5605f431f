import Foundation

extension GateStatistics {
    /// Benjamini-Hochberg adjusted q-values, in the order of the input p-values (monotone step-up).
    ///
    /// q(i) = min over ranks j ≥ rank(i) of min(1, p(j) · m / j), with m the number of p-values:
    /// a row fails at FDR level q exactly when its q-value is ≤ q. Pass every gated row-metric
    /// of the gate run at once; BH controls the false discovery rate across the whole family,
    /// and under a pure A/A the chance of any alarm. Equal p-values get equal q-values. A NaN
    /// p-value counts as 1: it takes its place in m but can never be rejected. Empty in, empty out.
    package static func benjaminiHochberg(_ pValues: [Double]) -> [Double] {
        let count = pValues.count
        guard count > 0 else { return [] }
        let cleaned = pValues.map { $0.isNaN ? 1 : min(max($0, 0), 1) }
        // Ascending by p; ties keep input order, which does not change the result.
        let order = cleaned.indices.sorted { cleaned[$0] < cleaned[$1] }
        var qValues = [Double](repeating: 1, count: count)
        var running = 1.0
        for rank in stride(from: count, through: 1, by: -1) {
            let index = order[rank - 1]
            running = min(running, cleaned[index] * Double(count) / Double(rank))
            qValues[index] = running
        }
        return qValues
    }
}
