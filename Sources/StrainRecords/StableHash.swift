/// FNV-1a over a text's UTF-8: the same for the same text on every machine and
/// run, unlike `hashValue`. Seeds, plan identities, shard assignment and bisect's
/// probe seeds use it.
package enum StableHash {
    package static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// FNV-1a over raw bytes (a binary's, when it has no build ID).
    package static func fnv1a(bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
