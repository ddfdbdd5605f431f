import Foundation

/// The function symbols of one ELF64 file (`.symtab`, else `.dynsym`), its data
/// objects (globals and statics, which name a lock), and the loadable segments that
/// turn a file offset into a symbol address.
struct ELFSymbolTable: Sendable {
    struct Symbol: Sendable {
        var start: UInt64
        var size: UInt64
        var name: String
    }

    struct Segment: Sendable {
        var fileOffset: UInt64
        var fileSize: UInt64
        var virtualAddress: UInt64
    }

    /// Sorted by start address.
    let symbols: [Symbol]
    /// Data objects (`STT_OBJECT` of a size), sorted by start address.
    let objects: [Symbol]
    let segments: [Segment]

    /// Reads `path`; nil when it is not a readable little-endian ELF64 file.
    init?(path: String) {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return nil }
        guard let parsed = Self.parse(data) else { return nil }
        (symbols, segments) = (parsed.0, parsed.2)
        objects = parsed.1
    }

    /// The data object spanning `address` (in the file's own terms), with the offset into it.
    func object(containing address: UInt64) -> (Symbol, UInt64)? {
        let low = Self.countStarting(atOrBefore: address, in: objects)
        guard low > 0 else { return nil }
        let object = objects[low - 1]
        let offset = address - object.start
        return offset < object.size ? (object, offset) : nil
    }

    /// The address in the file's own terms (as in its symbol table) of a byte at `fileOffset`.
    func virtualAddress(forFileOffset fileOffset: UInt64) -> UInt64? {
        for segment in segments where fileOffset >= segment.fileOffset && fileOffset < segment.fileOffset + segment.fileSize {
            return fileOffset - segment.fileOffset + segment.virtualAddress
        }
        return nil
    }

    /// The offset in the file of the byte the file's own terms place at `virtualAddress`.
    func fileOffset(forVirtualAddress virtualAddress: UInt64) -> UInt64? {
        for segment in segments where virtualAddress >= segment.virtualAddress && virtualAddress < segment.virtualAddress + segment.fileSize {
            return virtualAddress - segment.virtualAddress + segment.fileOffset
        }
        return nil
    }

    /// The function containing `address`, with the offset into it.
    func symbol(containing address: UInt64) -> (Symbol, UInt64)? {
        var index = Self.countStarting(atOrBefore: address, in: symbols) - 1
        // Several symbols can share a start; any that spans the address will do.
        while index >= 0 {
            let symbol = symbols[index]
            let offset = address - symbol.start
            if symbol.size == 0 ? offset < 4096 : offset < symbol.size { return (symbol, offset) }
            if index > 0, symbols[index - 1].start == symbol.start { index -= 1 } else { break }
        }
        return nil
    }

    /// The start of each function called one of `names` (a symbol's name as the
    /// table spells it, mangled), in one pass; the first of several with one name.
    func starts(of names: Set<String>) -> [String: UInt64] {
        var found: [String: UInt64] = [:]
        for symbol in symbols where found[symbol.name] == nil && names.contains(symbol.name) {
            found[symbol.name] = symbol.start
            if found.count == names.count { break }
        }
        return found
    }

    /// How many of `sorted` (ordered by start) start at or before `address`: a binary search.
    private static func countStarting(atOrBefore address: UInt64, in sorted: [Symbol]) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle].start <= address { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func parse(_ data: Data) -> ([Symbol], [Symbol], [Segment])? {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> ([Symbol], [Symbol], [Segment])? in
            func read<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T? {
                guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else { return nil }
                return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            guard bytes.count > 64, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46,
                  bytes[4] == 2, bytes[5] == 1 else { return nil }
            guard let programOffset = read(0x20, UInt64.self), let sectionOffset = read(0x28, UInt64.self),
                  let programEntrySize = read(0x36, UInt16.self), let programCount = read(0x38, UInt16.self),
                  let sectionEntrySize = read(0x3a, UInt16.self), let sectionCount = read(0x3c, UInt16.self)
            else { return nil }

            var segments: [Segment] = []
            for index in 0..<Int(programCount) {
                let base = Int(programOffset) + index * Int(programEntrySize)
                guard let type = read(base, UInt32.self), type == 1,  // PT_LOAD
                      let offset = read(base + 8, UInt64.self), let address = read(base + 16, UInt64.self),
                      let size = read(base + 32, UInt64.self) else { continue }
                segments.append(Segment(fileOffset: offset, fileSize: size, virtualAddress: address))
            }

            struct Section {
                var type: UInt32
                var offset: UInt64
                var size: UInt64
                var link: UInt32
                var entrySize: UInt64
            }
            var sections: [Section] = []
            for index in 0..<Int(sectionCount) {
                let base = Int(sectionOffset) + index * Int(sectionEntrySize)
                guard let type = read(base + 4, UInt32.self), let offset = read(base + 24, UInt64.self),
                      let size = read(base + 32, UInt64.self), let link = read(base + 40, UInt32.self),
                      let entrySize = read(base + 56, UInt64.self) else { return nil }
                sections.append(Section(type: type, offset: offset, size: size, link: link, entrySize: entrySize))
            }
            // .symtab (2) when the file has one; .dynsym (11) otherwise.
            let tables = sections.filter { $0.type == 2 }.isEmpty ? sections.filter { $0.type == 11 } : sections.filter { $0.type == 2 }
            var symbols: [Symbol] = []
            var objects: [Symbol] = []
            for table in tables where table.entrySize >= 24 && Int(table.link) < sections.count {
                let strings = sections[Int(table.link)]
                let count = Int(table.size / table.entrySize)
                for index in 0..<count {
                    let base = Int(table.offset) + index * Int(table.entrySize)
                    guard let nameOffset = read(base, UInt32.self), let info = read(base + 4, UInt8.self),
                          let value = read(base + 8, UInt64.self), let size = read(base + 16, UInt64.self) else { break }
                    let kind = info & 0xf
                    let isObject = kind == 1 && size > 0  // STT_OBJECT
                    guard kind == 2 || kind == 10 || isObject, value != 0 else { continue }  // STT_FUNC, STT_GNU_IFUNC
                    let start = Int(strings.offset) + Int(nameOffset)
                    guard start < bytes.count else { continue }
                    var end = start
                    while end < bytes.count, bytes[end] != 0 { end += 1 }
                    let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                    if isObject {
                        objects.append(Symbol(start: value, size: size, name: name))
                    } else {
                        symbols.append(Symbol(start: value, size: size, name: name))
                    }
                }
            }
            symbols.sort { $0.start < $1.start }
            objects.sort { $0.start < $1.start }
            return (symbols, objects, segments)
        }
    }
}
