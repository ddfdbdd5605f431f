import Foundation

/// Byte sizes as suites write them: `512KiB`, `8MiB`, `1GiB`, `65536`.
public enum ByteSize {
    /// The number of bytes, or nil when `text` is not a size.
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)
            guard let value = Int(number), value >= 0 else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        return Int(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// `512KiB`, `8MiB`, `1025KiB`, `20000B`: the shortest form that parses back to
    /// the same number, for names that are identities (a strategy in a `TrialKey`).
    public static func exact(_ bytes: Int) -> String {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        for (suffix, factor) in units where bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor)\(suffix)"
        }
        return "\(bytes)B"
    }

    /// `512KiB`, `8MiB`, `1.5MiB`, `100B`: the shortest exact form, else one decimal (for reading, not parsing).
    public static func format(_ bytes: Int) -> String {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        for (suffix, factor) in units where bytes >= factor {
            if bytes % factor == 0 { return "\(bytes / factor)\(suffix)" }
            return String(format: "%.1f%@", Double(bytes) / Double(factor), suffix)
        }
        return "\(bytes)B"
    }
}
