import Foundation

/// An ELF file's GNU build ID (`NT_GNU_BUILD_ID` in a `PT_NOTE` segment, what
/// `readelf -n` prints as "Build ID"): the linker derives it from the code, so two
/// builds of different code differ here whatever checkout they ran from.
package enum ELFBuildID {
    /// `7b5e265a7af6262fc78e50e58f284ab9a8115bb0`; nil when `path` is not a readable
    /// little-endian ELF64 file or carries no build ID.
    package static func of(path: String) -> String? {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return nil }
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> String? in
            func read<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T? {
                guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else { return nil }
                return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            guard bytes.count > 64, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46,
                  bytes[4] == 2, bytes[5] == 1,
                  let headerOffset = read(0x20, UInt64.self), let entrySize = read(0x36, UInt16.self),
                  let count = read(0x38, UInt16.self) else { return nil }
            for index in 0..<Int(count) {
                let base = Int(headerOffset) + index * Int(entrySize)
                guard let type = read(base, UInt32.self), type == 4,  // PT_NOTE
                      let offset = read(base + 8, UInt64.self), let size = read(base + 32, UInt64.self) else { continue }
                var note = Int(offset)
                let end = min(Int(offset) + Int(size), bytes.count)
                while note + 12 <= end, let nameSize = read(note, UInt32.self), let descriptionSize = read(note + 4, UInt32.self),
                      let noteType = read(note + 8, UInt32.self) {
                    let name = note + 12
                    let description = name + (Int(nameSize) + 3) / 4 * 4
                    let next = description + (Int(descriptionSize) + 3) / 4 * 4
                    guard next <= end else { break }
                    // NT_GNU_BUILD_ID, owner "GNU\0".
                    if noteType == 3, nameSize == 4, bytes[name] == 0x47, bytes[name + 1] == 0x4e, bytes[name + 2] == 0x55, descriptionSize > 0 {
                        return UnsafeRawBufferPointer(rebasing: bytes[description..<description + Int(descriptionSize)])
                            .map { String(format: "%02x", $0) }.joined()
                    }
                    note = next
                }
            }
            return nil
        }
    }
}
