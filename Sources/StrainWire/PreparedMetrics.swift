import StrainRecords

/// The metrics a scenario recorded in `prepare`, sent by the child as soon as
/// `prepare` returns, on the result pipe as one line: `METRICS ` and this value as
/// JSON. A trial that then crashes or hangs ends with a fault record or nothing at
/// all, never a `HostReport`: without this line what `prepare` measured (the graph
/// it built, the bytes it archived) would be lost with it.
package struct PreparedMetrics: Codable, Sendable, Equatable {
    /// The version of this message; the parent checks it first.
    package static let currentVersion = 1

    package var version: Int
    /// By metric name, as `ScenarioContext.record` kept them.
    package var custom: [String: Double]

    package init(custom: [String: Double]) {
        self.version = Self.currentVersion
        self.custom = custom
    }

    /// The line prefix that marks the message on the result pipe.
    package static let linePrefix = "METRICS "
}
