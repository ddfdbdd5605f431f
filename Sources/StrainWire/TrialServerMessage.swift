import Foundation

/// What the runner asks its trial server: one SOCK_SEQPACKET message, with the
/// trial's standard output, standard error, result pipe and (when `shared`) its
/// heartbeat block attached as descriptors, in that order.
package struct TrialServerRequest: Codable, Sendable {
    /// The version of this message and of `TrialServerReply`; both ends check it.
    package static let currentVersion = 1
    /// Longest request the server reads (a trial spec is a few hundred bytes).
    package static let maximumBytes = 1 << 20

    package var version = Self.currentVersion
    /// The trial's `TrialSpec`, as JSON, exactly as `_trial` takes it.
    package var spec: String
    /// Whether a heartbeat block comes as the fourth descriptor.
    package var shared: Bool

    package init(spec: String, shared: Bool) {
        self.spec = spec
        self.shared = shared
    }
}

/// What the trial server answers: once when it is ready, then once per request.
package enum TrialServerReply: Codable, Sendable, Equatable {
    /// Loaded, single-threaded and waiting for requests.
    case ready(version: Int, pid: Int32)
    /// The trial runs as `pid`, a child of the runner in a process group of its own.
    case started(pid: Int32)
    /// Nothing was started, and why (with an errno value when there is one).
    case refused(errno: Int32, message: String)
}
