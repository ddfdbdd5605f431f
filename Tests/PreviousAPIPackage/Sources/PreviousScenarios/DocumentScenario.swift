import Foundation
import StrainHelpers
import StrainKit

/// Written against 0.1.0 (its WritingAScenario and YourOwnScenarios articles):
/// metrics declared as `MetricDescriptor`s added to `WorkerResults.metrics` (as the
/// article's cache scenario did), recorded by name with `context.record(_:_:)` and a
/// `Double`.
public struct DocumentScenario: Scenario {
    public static let name = "document"
    public static let summary = "encodes a document of `paragraphs` paragraphs as JSON"

    public static let paragraphs = Parameter<Int>("paragraphs", in: 1...10_000, default: 64, help: "paragraphs in the document")
    public static let parameters: [any ParameterDeclaration] = [paragraphs]
    public static let metrics = [
        MetricDescriptor(name: "document bytes", unit: .bytes, polarity: .lowerIsBetter, noise: .deterministic, summary: "bytes of the encoded document"),
    ] + WorkerResults.metrics

    let paragraphs: Int

    public init(parameters: ParameterValues) {
        paragraphs = parameters[Self.paragraphs]
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let document = (0..<paragraphs).map { "paragraph \($0): " + String(repeating: "x", count: $0 % 40) }
        return { executor in
            context.heartbeat.queued(1)
            try executor.perform {
                let bytes = try context.unit { try JSONEncoder().encode(document).count }
                context.record("document bytes", Double(bytes))
            }
        }
    }
}
