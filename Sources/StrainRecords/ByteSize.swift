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

    /// `an 8 MiB`, `a 512 KiB`, `an 11 KiB`, `a 1.5 MiB`: a size as a sentence reads it
    /// (`on an 8 MiB stack`), ``format(_:)``'s number with the unit set apart and the
    /// article the number is spoken with.
    public static func spoken(_ bytes: Int) -> String {
        let text = prose(bytes)
        return "\(article(for: String(text.prefix { $0 != " " }))) \(text)"
    }

    /// `an` for a number spoken with a vowel sound first (eight, eleven, eighteen,
    /// eighty-…, eight hundred, eleven thousand), else `a`: from its leading group of digits.
    public static func article(for number: String) -> String {
        let whole = number.prefix { $0.isNumber }
        guard !whole.isEmpty else { return "a" }
        let leading = whole.prefix(whole.count % 3 == 0 ? 3 : whole.count % 3)
        return leading.first == "8" || leading == "11" || leading == "18" ? "an" : "a"
    }

    /// `512 KiB`, `17.5 KiB`: ``format(_:)`` (with `exact`, ``exact(_:)``) spaced as in a
    /// sentence or a table; `thread(512KiB)` is a strategy's spelling, for a suite.
    package static func prose(_ bytes: Int, exact: Bool = false) -> String {
        let text = exact ? Self.exact(bytes) : format(bytes)
        let number = text.prefix { $0.isNumber || $0 == "." }
        return "\(number) \(text.dropFirst(number.count))"
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
