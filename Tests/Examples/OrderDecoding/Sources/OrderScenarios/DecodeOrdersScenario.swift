import Foundation
import OrderModel
import StrainHelpers
import StrainKit

/// How an order is stored.
public enum OrderCoding: String, CaseIterable, Sendable {
    /// `JSONEncoder` / `JSONDecoder`.
    case json
    /// `NSKeyedArchiver` / `NSKeyedUnarchiver`.
    case keyedArchive = "keyed-archive"
}

/// Decodes one deeply nested order on the trial's strategy, as the app does
/// when it opens a saved order: how deep can bundles nest before a 512 KiB
/// secondary thread's stack runs out?
public struct DecodeOrdersScenario: Scenario {
    public static let name = "decode-orders"
    public static let summary = "decodes an order whose bundles nest `depth` deep, from JSON or a keyed archive"

    static let depth = Parameter<Int>("depth", in: 1...100_000, default: 100, help: "levels of bundles inside bundles")
    static let width = Parameter<Int>("width", in: 0...100, default: 2, help: "plain lines beside each nested bundle")
    static let coding = Parameter<OrderCoding>("coding", default: .json, help: "json: JSONDecoder; keyed-archive: NSKeyedUnarchiver")
    public static let parameters: [any ParameterDeclaration] = [depth, width, coding]
    public static let lines = Metric<Int>.count("lines", better: nil, noise: .deterministic, summary: "lines in the decoded order")
    public static let encodedBytes = Metric<Int>.bytes("encoded bytes", better: .lowerIsBetter, noise: .deterministic, summary: "bytes of the stored order")
    public static let metrics: [any MetricDeclaration] = [lines, encodedBytes]
    public static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "the order's nesting fits the stack (and JSONDecoder's depth limit)"),
        TypicalOutcome(.stackOverflow, because: "NSKeyedUnarchiver recurses several frames per level: deep bundles overflow a 512 KiB stack"),
        TypicalOutcome(.threw, because: "JSONEncoder and JSONDecoder refuse nesting deeper than 512 (two levels of JSON per bundle)"),
    ]

    let depth: Int
    let width: Int
    let coding: OrderCoding

    public init(parameters: ParameterValues) {
        depth = parameters[Self.depth]
        width = parameters[Self.width]
        coding = parameters[Self.coding]
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        // Built and encoded here, on the harness's large stack, unmeasured.
        let order = Order.nested(id: 1, depth: depth, width: width)
        let expected = order.lineCount
        let data: Data = switch coding {
        case .json: try JSONEncoder().encode(order)
        case .keyedArchive: try NSKeyedArchiver.archivedData(withRootObject: order, requiringSecureCoding: false)
        }
        context.record(Self.encodedBytes, data.count)
        let coding = coding
        return { executor in
            try executor.perform {
                let decoded: Order? = switch coding {
                case .json: try JSONDecoder().decode(Order.self, from: data)
                case .keyedArchive: try Self.unarchive(data)
                }
                let lines = decoded?.lineCount ?? 0
                context.record(Self.lines, lines)
                try context.check(lines == expected, "decoded \(lines) lines of \(expected)")
            }
        }
    }

    static func unarchive(_ data: Data) throws -> Order? {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        defer { unarchiver.finishDecoding() }
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? Order
    }
}
