/// A checksum of `bytes`, mixed over `rounds` passes: work whose instructions grow
/// with `rounds` and nothing else (the regression an instruction budget should catch
/// is a second pass).
@inline(never)
public func checksum(_ bytes: [UInt8], rounds: Int) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for _ in 0..<rounds {
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
    }
    return hash
}
