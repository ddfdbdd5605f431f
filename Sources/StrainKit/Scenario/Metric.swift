/// One metric a scenario records, declared once with its unit, direction and noise
/// class, and recorded through this handle, so a name is spelt in one place and a
/// value has the type its unit needs.
///
/// ```swift
/// struct ArchiveGraph: Scenario {
///     static let objects = Metric<Int>.count("objects", better: nil, noise: .deterministic, summary: "objects in the graph")
///     static let archiveBytes = Metric<Int>.bytes("archiveBytes", better: .lowerIsBetter, noise: .deterministic, summary: "bytes of the keyed archive")
///     static let metrics: [any MetricDeclaration] = [objects, archiveBytes]
///
///     func prepare(context: ScenarioContext) throws -> Workload {
///         context.record(Self.objects, 5_000)
///         …
///     }
/// }
/// ```
///
/// The reports show a declared metric with its unit, and the gate judges it in the
/// direction `better` names (never, where it is nil) and as its noise class says:
/// a `deterministic` or `counted` metric exactly, a `timing` one over repetitions.
/// A metric recorded through a handle the scenario does not list in
/// ``Scenario/metrics`` is shown as "declared by no scenario" and never judged.
public struct Metric<Value: MetricValue>: MetricDeclaration {
    /// The declaration as the reports, the gate and `strain explain` see it.
    public let descriptor: MetricDescriptor

    /// The name the reports and the gate use.
    public var name: String { descriptor.name }

    private init(_ name: String, unit: MetricDescriptor.Unit, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) {
        descriptor = MetricDescriptor(name: name, unit: unit, polarity: better, noise: noise, summary: summary)
    }
}

extension Metric where Value == Double {
    /// A handle to a metric only recorded by its name (0.1.0's `record(_:_:)` with a
    /// `String`): what a declaration in ``Scenario/metrics`` of that name says is what
    /// the reports show.
    init(recordedAs name: String) {
        descriptor = .undeclared(name)
    }
}

extension MetricDescriptor: MetricDeclaration {
    /// The descriptor itself: 0.1.0 declared metrics as descriptors, and a list of
    /// them is still a valid ``Scenario/metrics`` once typed `[any MetricDeclaration]`.
    public var descriptor: MetricDescriptor { self }
}

extension Metric where Value == Int {
    /// A whole count (`objects`, `progress blocks run`).
    public static func count(_ name: String, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) -> Metric<Int> {
        Metric(name, unit: .count, better: better, noise: noise, summary: summary)
    }

    /// A size in bytes, shown as `1.2 MiB`.
    public static func bytes(_ name: String, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) -> Metric<Int> {
        Metric(name, unit: .bytes, better: better, noise: noise, summary: summary)
    }
}

extension Metric where Value == Double {
    /// A time in seconds.
    public static func seconds(_ name: String, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) -> Metric<Double> {
        Metric(name, unit: .seconds, better: better, noise: noise, summary: summary)
    }

    /// A time in nanoseconds, shown as `481 ns` or `1.6 µs`.
    public static func nanoseconds(_ name: String, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) -> Metric<Double> {
        Metric(name, unit: .nanoseconds, better: better, noise: noise, summary: summary)
    }

    /// A rate per second, shown as `12.8 M/s`.
    public static func rate(_ name: String, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) -> Metric<Double> {
        Metric(name, unit: .perSecond, better: better, noise: noise, summary: summary)
    }

    /// A plain ratio or fraction.
    public static func ratio(_ name: String, better: MetricDescriptor.Polarity?, noise: MetricDescriptor.Noise, summary: String) -> Metric<Double> {
        Metric(name, unit: .ratio, better: better, noise: noise, summary: summary)
    }
}

/// A metric declaration of any value type, as ``Scenario/metrics`` lists them.
public protocol MetricDeclaration: Sendable {
    /// The declaration's name, unit, direction, noise class and summary.
    var descriptor: MetricDescriptor { get }
}

/// A value a ``Metric`` records: a whole number (counts, bytes) or a real one
/// (times, rates, ratios).
public protocol MetricValue: Sendable {
    /// The value as the trial's record keeps it.
    var recordedValue: Double { get }
}

extension Int: MetricValue {
    /// The count as a `Double` (exact up to 2^53).
    public var recordedValue: Double { Double(self) }
}

extension Double: MetricValue {
    /// The value itself.
    public var recordedValue: Double { self }
}
