/// Shortens a demangled C++ name to what a person reads in a trace: the name
/// without its parameter list, which in the runtime's frames is longer than the name.
///
/// `tryCast(swift::OpaqueValue*, …)` becomes `tryCast`, and
/// `main::{lambda()#1}::operator()() const` becomes `main::{lambda()#1}::operator()`:
/// only the parameter list at the top level goes, so a lambda's own `{lambda(int)#1}`,
/// a call operator's `operator()`, template arguments and `(anonymous namespace)`
/// stay whole. Cutting at the first `(` named such frames `main::{lambda`.
enum CxxSymbolName {
    static func withoutParameters(_ name: String) -> String {
        let bytes = Array(name.utf8)
        var depth = 0
        // The last "(" at depth 0 that opens a parameter list: the function's own is the last one.
        var parameters: Int?
        var index = 0
        while index < bytes.count {
            if starts(bytes, at: index, with: anonymousNamespace) {
                index += anonymousNamespace.count
                continue
            }
            if let length = operatorLength(bytes, at: index) {
                index += length
                continue
            }
            switch bytes[index] {
            case UInt8(ascii: "("):
                if depth == 0 { parameters = index }
                depth += 1
            case UInt8(ascii: "<"), UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: ">"), UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth = max(0, depth - 1)
            default:
                break
            }
            index += 1
        }
        guard var end = parameters, end > 0 else { return name }
        while end > 0, bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    private static let anonymousNamespace = Array("(anonymous namespace)".utf8)
    private static let operatorWord = Array("operator".utf8)
    /// What may follow `operator`, longest first: `operator()` and `operator<<` are names, not brackets.
    private static let operatorSymbols = [
        "()", "[]", "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&", "||", "++", "--",
        "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", ",",
    ].map { Array($0.utf8) }

    /// The length of `operator` and its symbol at `index` (`operator()`: 10), or nil when
    /// no operator with a symbol starts there (`operator new` is read as words).
    private static func operatorLength(_ bytes: [UInt8], at index: Int) -> Int? {
        guard starts(bytes, at: index, with: operatorWord), index == 0 || !isIdentifier(bytes[index - 1]) else { return nil }
        let after = index + operatorWord.count
        guard let symbol = operatorSymbols.first(where: { starts(bytes, at: after, with: $0) }) else { return nil }
        return operatorWord.count + symbol.count
    }

    private static func starts(_ bytes: [UInt8], at index: Int, with prefix: [UInt8]) -> Bool {
        index + prefix.count <= bytes.count && bytes[index..<(index + prefix.count)].elementsEqual(prefix)
    }

    private static func isIdentifier(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
    }
}
