import CStrainProbe
import Synchronization

/// What a scenario sees of the trial it runs in: its parameters, its seed, and
/// the places to record what it measured.
public final class ScenarioContext: Sendable {
    public let parameters: ParameterValues
    /// The seed the scenario derives any randomness from, so a trial can be rerun.
    public let seed: UInt64
    /// The platform the child emulates.
    public let profile: Profile
    private let threadReports = Mutex<[ThreadReport]>([])
    private let customMetrics = Mutex<[String: Double]>([:])

    public init(parameters: ParameterValues, seed: UInt64, profile: Profile) {
        self.parameters = parameters
        self.seed = seed
        self.profile = profile
    }

    /// Records a metric the scenario defines (`nodes`, `bytes`), kept in the trial's record.
    public func record(_ name: String, _ value: Double) {
        customMetrics.withLock { $0[name] = value }
    }

    /// Fails the trial as `invariantViolated` unless `condition` holds.
    public func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw InvariantViolation(message()) }
    }

    /// The deepest recursion marked so far (with `RecursionDepth`).
    public var deepestDepth: Int { strain_deepest_marked_depth() }

    /// Adds a report from a thread that ran scenario work (the executors call this).
    public func addThreadReport(_ report: ThreadReport) {
        threadReports.withLock { $0.append(report) }
    }

    public var reports: [ThreadReport] { threadReports.withLock { $0 } }
    public var metrics: [String: Double] { customMetrics.withLock { $0 } }
}

/// Recursion depth marks for code that has no context at hand, such as an
/// `init(coder:)` deep inside an unarchiver: a fault record carries the depth.
public enum RecursionDepth {
    @inline(__always)
    public static func enter() { _ = strain_depth_enter() }

    @inline(__always)
    public static func leave() { strain_depth_leave() }

    @inline(__always)
    public static func mark(_ depth: Int) { strain_mark_depth(depth) }
}
