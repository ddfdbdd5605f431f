import Foundation
import StrainHelpers
import StrainKit

/// Deeply nested JSON arrays through Foundation's writers and parsers: the
/// writers recurse until the stack runs out, the parsers refuse depth over 512.
struct NestedJSONScenario: Scenario {
    static let name = "nested-json"
    static let summary = "deeply nested arrays: JSONSerialization/JSONEncoder writing (stack), parsing and decoding (depth limit 512)"
    /// Which writer or parser runs.
    enum Operation: String, CaseIterable, Sendable { case serialize, encode, parse, decode }

    static let operation = Parameter<Operation>("operation", default: .serialize,
                                                help: "JSONSerialization.data, JSONEncoder.encode, JSONSerialization.jsonObject, JSONDecoder.decode")
    static let depth = Parameter<Int>("depth", in: 1...10_000_000, default: 100, help: "how many arrays nest inside each other")
    static let parameters: [any ParameterDeclaration] = [operation, depth]
    static let nesting = Metric<Int>.count("nesting", better: nil, noise: .deterministic, summary: "arrays nested inside each other")
    static let bytes = Metric<Int>.bytes("bytes", better: nil, noise: .deterministic, summary: "bytes of JSON written or read")
    static let metrics: [any MetricDeclaration] = [nesting, bytes]
    static let typicalOutcomes = [
        TypicalOutcome(.stackOverflow, because: "the writers recurse once per level and overflow first (JSONSerialization at depth 359 on 512 KiB)"),
        TypicalOutcome(.threw, because: "the parsers refuse nesting deeper than 512 with an error"),
        TypicalOutcome(.completed, because: "shallow enough for both"),
    ]
    static let starterRuns = [
        StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"]),
        // Past the 512 KiB boundary (359 levels) the writer overflows; the parser refuses depth over 512.
        StarterRun(parameters: ["depth": "1000"], strategies: ["thread(512KiB)"], expect: [.stackOverflow]),
        StarterRun(parameters: ["operation": "parse", "depth": "1000"], strategies: ["thread(8MiB)"], expect: [.threw]),
    ]

    let operation: Operation
    let depth: Int

    /// Reads `operation` and `depth`.
    init(parameters: ParameterValues) {
        operation = parameters[Self.operation]
        depth = parameters[Self.depth]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let depth = depth
        context.record(Self.nesting, depth)
        switch operation {
        case .serialize:
            var value: Any = [Any]()
            for _ in 1..<depth { value = [value] }
            let root = Prepared(value)
            return { executor in
                try executor.perform {
                    let data = try JSONSerialization.data(withJSONObject: root.value)
                    context.record(Self.bytes, data.count)
                }
            }
        case .encode:
            let root = NestedArray(depth: depth)
            return { executor in
                try executor.perform {
                    let data = try JSONEncoder().encode(root)
                    context.record(Self.bytes, data.count)
                }
            }
        case .parse, .decode:
            let text = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            let operation = operation
            return { executor in
                try executor.perform {
                    if operation == .parse {
                        _ = try JSONSerialization.jsonObject(with: text)
                    } else {
                        let decoded = try JSONDecoder().decode(NestedArray.self, from: text)
                        try context.check(decoded.depth == depth, "decoded depth \(decoded.depth), wrote \(depth)")
                    }
                }
            }
        }
    }
}

/// `[[[…]]]` as a Codable value: one unkeyed container per level.
struct NestedArray: Codable, Sendable {
    let inner: [NestedArray]

    init(depth: Int) {
        var value = NestedArray(inner: [])
        for _ in 1..<max(depth, 1) { value = NestedArray(inner: [value]) }
        self = value
    }

    private init(inner: [NestedArray]) { self.inner = inner }

    var depth: Int {
        var levels = 1
        var current = self
        while let next = current.inner.first {
            levels += 1
            current = next
        }
        return levels
    }

    func encode(to encoder: any Encoder) throws {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        var container = encoder.unkeyedContainer()
        for element in inner { try container.encode(element) }
    }

    init(from decoder: any Decoder) throws {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        var container = try decoder.unkeyedContainer()
        var elements: [NestedArray] = []
        while !container.isAtEnd { elements.append(try container.decode(NestedArray.self)) }
        inner = elements
    }
}
