import Foundation
import StrainKit

/// Deeply nested JSON arrays through Foundation's writers and parsers: the
/// writers recurse until the stack runs out, the parsers refuse depth over 512.
public struct NestedJSONScenario: Scenario {
    public static let name = "nested-json"
    public static let summary = "deeply nested arrays: JSONSerialization/JSONEncoder writing (stack), parsing and decoding (depth limit 512)"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("operation", .choice(["serialize", "encode", "parse", "decode"]), default: "serialize",
                      summary: "JSONSerialization.data, JSONEncoder.encode, JSONSerialization.jsonObject, JSONDecoder.decode"),
        ParameterSpec("depth", .integer(1...10_000_000), default: "100", summary: "how many arrays nest inside each other"),
    ]

    enum Operation: String { case serialize, encode, parse, decode }

    let operation: Operation
    let depth: Int

    public init(parameters: ParameterValues) {
        operation = Operation(rawValue: parameters.string("operation")) ?? .serialize
        depth = parameters.integer("depth")
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let depth = depth
        context.record("nesting", Double(depth))
        switch operation {
        case .serialize:
            var value: Any = [Any]()
            for _ in 1..<depth { value = [value] }
            let root = Prepared(value)
            return { executor in
                try executor.perform {
                    let data = try JSONSerialization.data(withJSONObject: root.value)
                    context.record("bytes", Double(data.count))
                }
            }
        case .encode:
            let root = NestedArray(depth: depth)
            return { executor in
                try executor.perform {
                    let data = try JSONEncoder().encode(root)
                    context.record("bytes", Double(data.count))
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
