import CStrainProbe
import Foundation
import StrainKit
import Synchronization

/// Names the addresses of a child that is gone: the module from the child's
/// /proc/self/maps as it was at the fault, the function from the module's ELF
/// symbol table, Swift and C++ names demangled.
public final class Symbolizer: Sendable {
    /// Symbol tables by file path, read once per run.
    private let tables = Mutex<[String: ELFSymbolTable?]>([:])
    private let names = Mutex<[String: String]>([:])

    public init() {}

    /// One line of /proc/PID/maps that maps a file.
    struct Mapping {
        var start: UInt64
        var end: UInt64
        var fileOffset: UInt64
        var path: String
    }

    static func mappings(_ maps: String) -> [Mapping] {
        maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { return nil }
            let path = fields[5].trimmingCharacters(in: .whitespaces)
            guard path.hasPrefix("/") else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
                  let offset = UInt64(fields[2], radix: 16) else { return nil }
            return Mapping(start: start, end: end, fileOffset: offset, path: path)
        }
    }

    /// Frames for `addresses`; `firstIsExact` when the first address is the
    /// faulting instruction itself rather than a return address.
    public func frames(for addresses: [UInt64], maps: String, firstIsExact: Bool) -> [Frame] {
        let mappings = Self.mappings(maps)
        var cache: [UInt64: Frame] = [:]
        return addresses.enumerated().map { index, address in
            // A return address points after the call; look up the call itself.
            let lookup = index == 0 && firstIsExact ? address : address &- 1
            if let known = cache[lookup] { return Frame(address: address, module: known.module, moduleOffset: known.moduleOffset, symbol: known.symbol, symbolOffset: known.symbolOffset) }
            var frame = Frame(address: address)
            if let mapping = mappings.first(where: { lookup >= $0.start && lookup < $0.end }) {
                let fileOffset = lookup - mapping.start + mapping.fileOffset
                frame.module = mapping.path
                frame.moduleOffset = fileOffset
                if let table = table(for: mapping.path), let virtual = table.virtualAddress(forFileOffset: fileOffset),
                   let (symbol, offset) = table.symbol(containing: virtual) {
                    frame.symbol = demangled(symbol.name)
                    frame.symbolOffset = offset
                }
            }
            cache[lookup] = frame
            return frame
        }
    }

    private func table(for path: String) -> ELFSymbolTable? {
        if let cached = tables.withLock({ $0[path] }) { return cached }
        let table = ELFSymbolTable(path: path)
        tables.withLock { $0[path] = table }
        return table
    }

    /// `tryCast(swift::OpaqueValue*, …)` → `tryCast`: a C++ name without its
    /// parameter list, which in the runtime's frames is longer than the name.
    static func withoutParameters(_ name: String) -> String {
        var depth = 0
        for (offset, character) in name.enumerated() {
            if character == "<" { depth += 1 }
            if character == ">" { depth -= 1 }
            if character == "(", depth == 0, offset > 0 {
                let head = String(name.prefix(offset))
                // "(anonymous namespace)::f" starts with a parenthesis that is not a parameter list.
                if head.hasSuffix("(anonymous namespace)") || head.isEmpty { continue }
                return head
            }
        }
        return name
    }

    /// A symbol's readable name: Swift and C++ names demangled, C names as they are.
    public func demangled(_ name: String) -> String {
        if let known = names.withLock({ $0[name] }) { return known }
        var result = name
        if let swift = strain_demangle_swift(name) {
            result = SwiftSymbolName.simplify(String(cString: swift))
            free(swift)
        } else if let cxx = strain_demangle_cxx(name) {
            result = Self.withoutParameters(String(cString: cxx))
            free(cxx)
        }
        names.withLock { $0[name] = result }
        return result
    }
}
