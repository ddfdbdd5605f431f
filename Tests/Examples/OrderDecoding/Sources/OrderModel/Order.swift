import Foundation

/// A customer's order: lines of products, where a line may be a bundle of
/// lines (a gift box of gift boxes), so the tree is as deep as its bundles nest.
/// Coded with `Codable` (JSON) and with `NSCoding` (keyed archives), as the
/// app stores it.
public final class Order: NSObject, NSCoding, Codable, Sendable {
    public let id: Int
    public let customer: String
    public let lines: [LineItem]

    public init(id: Int, customer: String, lines: [LineItem]) {
        self.id = id
        self.customer = customer
        self.lines = lines
    }

    /// An order whose first line is a bundle nested `depth` levels deep, each
    /// level holding `width` plain lines beside the next bundle.
    public static func nested(id: Int, depth: Int, width: Int) -> Order {
        var bundle = LineItem(sku: "BOX-\(depth)", quantity: 1, priceCents: 0, parts: [])
        for level in stride(from: depth - 1, to: 0, by: -1) {
            let plain = (0..<width).map { LineItem(sku: "SKU-\(level)-\($0)", quantity: 1 + $0, priceCents: 199 * ($0 + 1), parts: []) }
            bundle = LineItem(sku: "BOX-\(level)", quantity: 1, priceCents: 0, parts: plain + [bundle])
        }
        return Order(id: id, customer: "customer-\(id)", lines: [bundle])
    }

    /// Lines in the whole tree.
    public var lineCount: Int { lines.reduce(0) { $0 + $1.lineCount } }

    public func encode(with coder: NSCoder) {
        coder.encode(id, forKey: "id")
        coder.encode(customer as NSString, forKey: "customer")
        coder.encode(lines as NSArray, forKey: "lines")
    }

    public init?(coder: NSCoder) {
        id = coder.decodeInteger(forKey: "id")
        customer = (coder.decodeObject(forKey: "customer") as? NSString).map(String.init) ?? ""
        lines = coder.decodeObject(forKey: "lines") as? [LineItem] ?? []
    }
}

/// One line of an order: a product, or a bundle whose parts are lines.
public final class LineItem: NSObject, NSCoding, Codable, Sendable {
    public let sku: String
    public let quantity: Int
    public let priceCents: Int
    public let parts: [LineItem]

    public init(sku: String, quantity: Int, priceCents: Int, parts: [LineItem]) {
        self.sku = sku
        self.quantity = quantity
        self.priceCents = priceCents
        self.parts = parts
    }

    /// This line and every line under it.
    public var lineCount: Int { 1 + parts.reduce(0) { $0 + $1.lineCount } }

    public func encode(with coder: NSCoder) {
        coder.encode(sku as NSString, forKey: "sku")
        coder.encode(quantity, forKey: "quantity")
        coder.encode(priceCents, forKey: "priceCents")
        coder.encode(parts as NSArray, forKey: "parts")
    }

    public init?(coder: NSCoder) {
        sku = (coder.decodeObject(forKey: "sku") as? NSString).map(String.init) ?? ""
        quantity = coder.decodeInteger(forKey: "quantity")
        priceCents = coder.decodeInteger(forKey: "priceCents")
        parts = coder.decodeObject(forKey: "parts") as? [LineItem] ?? []
    }
}
