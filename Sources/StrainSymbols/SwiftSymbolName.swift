/// Shortens a demangled Swift name to what a person reads in a trace:
/// `Foundation.NSKeyedArchiver.encode(_: Swift.Optional<Any>, forKey: Swift.String) -> ()`
/// becomes `NSKeyedArchiver.encode(_:forKey:)`.
enum SwiftSymbolName {
    static func simplify(_ demangled: String) -> String {
        var text = Substring(demangled)
        var notes: [String] = []
        func note(_ text: String) { if !notes.contains(text) { notes.append(text) } }
        func finish(_ result: String) -> String { notes.isEmpty ? result : result + " [\(notes.joined(separator: ", "))]" }
        // The compiler's wrappers around a name, in any order and nesting:
        // "merged partial apply forwarder for generic specialization <…> of closure #1 in …".
        var stripped = true
        while stripped {
            stripped = false
            for prefix in ["merged ", "outlined "] where text.hasPrefix(prefix) {
                text = text.dropFirst(prefix.count)
                stripped = true
            }
            // "(1) suspend resume partial function for X": a piece of async X after an await.
            if text.first == "(", let close = text.firstIndex(of: ")"), text[text.index(after: text.startIndex)..<close].allSatisfy(\.isNumber) {
                let rest = text[text.index(after: close)...]
                for kind in [" suspend resume partial function for ", " await resume partial function for "] where rest.hasPrefix(kind) {
                    text = rest.dropFirst(kind.count)
                    note("async resume")
                    stripped = true
                }
            }
            if text.hasPrefix("partial apply forwarder for ") {
                text = text.dropFirst("partial apply forwarder for ".count)
                note("partial apply")
                stripped = true
            }
            // "function signature specialization <Arg[0] = Owned To Guaranteed> of X": the optimizer's copy of X.
            for prefix in ["function signature specialization ", "generic specialization ", "generic partial specialization "] where text.hasPrefix(prefix) {
                let open = text.index(text.startIndex, offsetBy: prefix.count)
                guard open < text.endIndex, text[open] == "<", let close = matchingParenthesis(in: text, from: open) else { continue }
                let rest = text[text.index(after: close)...]
                guard rest.hasPrefix(" of ") else { continue }
                text = rest.dropFirst(" of ".count)
                stripped = true
            }
            if text.hasPrefix("protocol witness for ") {
                text = text.dropFirst("protocol witness for ".count)
                if let conformance = text.range(of: " in conformance ") { text = text[..<conformance.lowerBound] }
                note("witness")
                stripped = true
            }
        }
        // "reabstraction thunk helper <A> from @callee_guaranteed (…) to …": what follows is a type, not a name.
        if text.hasPrefix("reabstraction thunk") { return finish("reabstraction thunk") }
        // "closure #4 () -> () in Module.Type.method(…) -> ()": name the closure by where it is.
        for prefix in ["closure #", "implicit closure #"] where text.hasPrefix(prefix) {
            guard let hash = text.firstIndex(of: "#") else { break }
            let end = text[text.index(after: hash)...].firstIndex { !$0.isNumber } ?? text.endIndex
            if let within = topLevelRange(of: " in ", in: text) {
                return finish("\(text[..<end]) in \(simplify(String(text[within.upperBound...])))")
            }
        }
        var qualifier = ""
        for prefix in ["static ", "class "] where text.hasPrefix(prefix) {
            qualifier = prefix
            text = text.dropFirst(prefix.count)
        }
        var name = ""
        var index = text.startIndex
        // The qualified name runs to the parameter list: the first "(" that is not
        // a private discriminator "(name in _HASH)" or an extension's "(extension in Module):".
        while index < text.endIndex {
            let character = text[index]
            if character == "(" {
                let rest = text[index...]
                if rest.hasPrefix("(extension in "), let close = rest.firstIndex(of: ")") {
                    index = text.index(after: close)
                    if index < text.endIndex, text[index] == ":" { index = text.index(after: index) }
                    continue
                }
                // "(loadSequence in _61DA…)" names a private declaration; a parameter list that
                // mentions a private type, "(from: Yams.(Event in _61DA…))", is not one.
                if let close = rest.firstIndex(of: ")"), let discriminated = privateName(rest[rest.index(after: index)..<close]) {
                    name += discriminated
                    index = text.index(after: close)
                    continue
                }
                break
            }
            // A generic signature, `map<A, B where …>`, says nothing a reader of a trace needs.
            if character == "<", !name.isEmpty, let close = matchingParenthesis(in: text, from: index) {
                index = text.index(after: close)
                continue
            }
            name.append(character)
            index = text.index(after: index)
        }
        var labels = ""
        if index < text.endIndex, let close = matchingParenthesis(in: text, from: index) {
            let parameters = text[text.index(after: index)..<close]
            labels = "(" + topLevelParts(parameters).map { part in
                // `forKey: Swift.String` has a label; `(A.Element) throws -> B` or `[K: V]` has none.
                if let colon = part.firstIndex(of: ":") {
                    let label = String(part[..<colon]).trimmed
                    if !label.isEmpty, label.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return label + ":" }
                }
                return "_:"
            }.joined() + ")"
            if parameters.isEmpty { labels = "()" }
        }
        // Drop the module: the first component of a qualified name.
        let components = name.split(separator: ".", maxSplits: 1)
        if components.count == 2, !name.hasPrefix("closure"), components[0].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            name = String(components[1])
        }
        return finish(qualifier + name + labels)
    }

    /// `loadSequence` for the inside of a private discriminator, `loadSequence in _61DA…`
    /// (a name, " in _", then the file's hash in hexadecimal); nil for anything else.
    static func privateName(_ inner: Substring) -> String? {
        guard let marker = inner.range(of: " in _") else { return nil }
        let name = inner[..<marker.lowerBound]
        let hash = inner[marker.upperBound...]
        guard !name.isEmpty, !hash.isEmpty, !name.contains(where: { "():,<>[] ".contains($0) }),
              hash.allSatisfy(\.isHexDigit) else { return nil }
        return String(name)
    }

    /// The first `needle` outside any brackets.
    private static func topLevelRange(of needle: String, in text: Substring) -> Range<Substring.Index>? {
        var depth = 0
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "(" || character == "<" || character == "[" { depth += 1 }
            if character == ")" || character == "]" { depth -= 1 }
            if character == ">", index > text.startIndex, text[text.index(before: index)] != "-" { depth -= 1 }
            if depth == 0, text[index...].hasPrefix(needle) { return index..<text.index(index, offsetBy: needle.count) }
            index = text.index(after: index)
        }
        return nil
    }

    private static func matchingParenthesis(in text: Substring, from open: Substring.Index) -> Substring.Index? {
        var depth = 0
        var index = open
        while index < text.endIndex {
            switch text[index] {
            case "(", "<", "[": depth += 1
            case ")", ">", "]":
                // `->` is an arrow, not a closing bracket.
                if text[index] == ">", index > text.startIndex, text[text.index(before: index)] == "-" { break }
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            index = text.index(after: index)
        }
        return nil
    }

    private static func topLevelParts(_ text: Substring) -> [Substring] {
        var parts: [Substring] = []
        var depth = 0
        var start = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "(" || character == "<" || character == "[" { depth += 1 }
            if character == ")" || character == "]" { depth -= 1 }
            if character == ">", index > text.startIndex, text[text.index(before: index)] != "-" { depth -= 1 }
            if character == ",", depth == 0 {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        if start < text.endIndex { parts.append(text[start...]) }
        return parts
    }
}

private extension String {
    var trimmed: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
