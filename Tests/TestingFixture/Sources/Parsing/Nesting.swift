/// A nested list, as a recursive-descent parser would build it from `[[[…]]]`.
public indirect enum Nesting: Sendable {
    case leaf
    case list([Nesting])

    /// `depth` lists, each holding the next.
    public static func nested(_ depth: Int) -> Nesting {
        var value = Nesting.leaf
        for _ in 0..<depth { value = .list([value]) }
        return value
    }
}

/// Parses `text` (`[` … `]`) recursively, one call per level: deep input needs a deep stack.
public func parse(_ text: String) -> Nesting {
    let bytes = Array(text.utf8)
    var index = bytes.startIndex
    return parseList(bytes, &index)
}

@inline(never)
func parseList(_ bytes: [UInt8], _ index: inout Array<UInt8>.Index) -> Nesting {
    guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "[") else { return .leaf }
    index += 1
    let inner = parseList(bytes, &index)
    if index < bytes.endIndex, bytes[index] == UInt8(ascii: "]") { index += 1 }
    return .list([inner])
}

/// Counts the levels of `value`, recursively.
@inline(never)
public func depth(of value: Nesting) -> Int {
    switch value {
    case .leaf: 0
    case .list(let items): 1 + (items.map(depth(of:)).max() ?? 0)
    }
}

/// A bug: follows a reference that points back at itself, so it never ends.
@inline(never)
public func countForever(_ level: Int) -> Int {
    level < 0 ? level : countForever(level + 1) + 1
}

/// Names for `count` elements: one `String` each, and one more per element when
/// `extra` (the regression a budget should catch).
public func labels(_ count: Int, extra: Bool) -> [String] {
    var result: [String] = []
    result.reserveCapacity(count)
    for index in 0..<count {
        var label = "element number \(index) of the list"
        if extra { label = String(label.reversed()) }
        result.append(label)
    }
    return result
}
