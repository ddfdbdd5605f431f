import Foundation

/// The shared libraries an ELF file names as needed (`DT_NEEDED`, what `readelf -d`
/// lists as "Shared library"), read from its dynamic section.
package enum ELFNeededLibraries {
    /// `["libtsan.so.2", "libc.so.6"]`; nil when `path` is not a readable little-endian ELF64 file.
    package static func of(path: String) -> [String]? {
        sections(path: path) { bytes, read, section, count, _ in
            var needed: [String] = []
            for index in 0..<count {
                guard let dynamic = section(index), dynamic.type == 6,  // SHT_DYNAMIC
                      let strings = section(Int(dynamic.link)) else { continue }
                for entry in 0..<Int(dynamic.size / 16) {
                    let base = Int(dynamic.offset) + entry * 16
                    guard let tag = read(base), tag != 0, let value = read(base + 8) else { break }
                    guard tag == 1 else { continue }  // DT_NEEDED
                    // An entry whose name lies past the file's end names nothing.
                    let library = string(bytes, at: Int(strings.offset) &+ Int(value))
                    if !library.isEmpty { needed.append(library) }
                }
            }
            return needed
        }
    }

    /// Whether the ELF file at `path` has a section named `name` (`.go.buildinfo`, which every
    /// Go program since Go 1.13 has, cgo or not); nil when it is not a readable ELF64 file.
    package static func hasSection(_ name: String, path: String) -> Bool? {
        sections(path: path) { bytes, _, section, count, namesIndex in
            guard let names = section(namesIndex) else { return false }
            return (0..<count).contains { index in
                section(index).map { string(bytes, at: Int(names.offset) + Int($0.name)) == name } ?? false
            }
        }
    }

    /// Whether the ELF file at `path` defines `name` among the symbols it exports
    /// (`.dynsym`, a defined entry): a program that defines its own `malloc` serves every
    /// library's calls to it. Nil when it is not a readable ELF64 file.
    package static func definesSymbol(_ name: String, path: String) -> Bool? {
        sections(path: path) { bytes, read, section, count, _ in
            for index in 0..<count {
                guard let symbols = section(index), symbols.type == 11,  // SHT_DYNSYM
                      let strings = section(Int(symbols.link)) else { continue }
                // Elf64_Sym, 24 bytes: st_name (4), st_info, st_other, st_shndx (2), then value and size.
                for entry in 1..<max(1, Int(symbols.size / 24)) {
                    guard let word = read(Int(symbols.offset) + entry * 24) else { break }
                    let section = UInt16(truncatingIfNeeded: word >> 48)
                    if section != 0, string(bytes, at: Int(strings.offset) &+ Int(UInt32(truncatingIfNeeded: word))) == name { return true }
                }
            }
            return false
        }
    }

    /// The NUL-ended string at `start` of `bytes`, empty past the end.
    private static func string(_ bytes: UnsafeRawBufferPointer, at start: Int) -> String {
        guard start >= 0, start < bytes.count else { return "" }
        var end = start
        while end < bytes.count, bytes[end] != 0 { end += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    typealias Section = (name: UInt32, type: UInt32, offset: UInt64, size: UInt64, link: UInt32)

    /// `body` over the mapped file's bytes, a bounded reader of 64-bit words, its section headers (each read
    /// with bounds) and their count and the index of the section of their names; nil when
    /// `path` is not a readable little-endian ELF64 file.
    private static func sections<Result>(path: String, _ body: (UnsafeRawBufferPointer, (Int) -> Int64?, (Int) -> Section?, Int, Int) -> Result?) -> Result? {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return nil }
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Result? in
            func read<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T? {
                guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else { return nil }
                return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            guard bytes.count > 64, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46,
                  bytes[4] == 2, bytes[5] == 1,
                  let sectionOffset = read(0x28, UInt64.self), let entrySize = read(0x3a, UInt16.self),
                  let count = read(0x3c, UInt16.self), let namesIndex = read(0x3e, UInt16.self) else { return nil }
            func section(_ index: Int) -> Section? {
                guard index >= 0, index < Int(count) else { return nil }
                let base = Int(sectionOffset) + index * Int(entrySize)
                guard let name = read(base, UInt32.self), let type = read(base + 4, UInt32.self), let offset = read(base + 24, UInt64.self),
                      let size = read(base + 32, UInt64.self), let link = read(base + 40, UInt32.self),
                      offset < UInt64(bytes.count) else { return nil }
                return (name, type, offset, size, link)
            }
            return body(bytes, { read($0, Int64.self) }, section, Int(count), Int(namesIndex))
        }
    }

    /// Whether the ELF executable at `path` is statically linked: it names no program
    /// interpreter (`PT_INTERP`, the dynamic loader), so nothing reads `LD_PRELOAD` when
    /// it starts (a plain `go build`, `gcc -static`, a static-pie). Nil when `path` is not
    /// a readable little-endian ELF64 executable (a script, a missing file).
    package static func isStatic(path: String) -> Bool? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 64), header.count == 64 else { return nil }
        func read<T: FixedWidthInteger>(_ data: Data, _ offset: Int, _: T.Type) -> T {
            data.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        }
        guard header.starts(with: [0x7f, 0x45, 0x4c, 0x46, 2, 1]) else { return nil }
        let type = read(header, 0x10, UInt16.self)
        guard type == 2 || type == 3 else { return nil }  // ET_EXEC, ET_DYN
        let tableOffset = read(header, 0x20, UInt64.self)
        let entrySize = Int(read(header, 0x36, UInt16.self))
        let count = Int(read(header, 0x38, UInt16.self))
        guard entrySize >= 56, count > 0, count < 4096, tableOffset < 1 << 32 else { return nil }
        guard (try? handle.seek(toOffset: tableOffset)) != nil, let table = try? handle.read(upToCount: entrySize * count),
              table.count == entrySize * count else { return nil }
        var loads = 0
        for index in 0..<count {
            switch read(table, index * entrySize, UInt32.self) {
            case 3: return false  // PT_INTERP: started by the dynamic loader
            case 1: loads += 1  // PT_LOAD
            default: break
            }
        }
        // No interpreter and something to load: the kernel starts it at its own entry point.
        return loads > 0 ? true : nil
    }
}
