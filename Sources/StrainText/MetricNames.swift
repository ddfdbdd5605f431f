import StrainRecords

extension MetricDescriptor {
    /// `name` as the reports show it, in words: a camelCase name is spaced
    /// (`archiveBytes` → `archive bytes`) to read beside the names written in words;
    /// a run of capitals stays one word (`HTTPBytes` → `HTTP bytes`). A name that ends
    /// in `seconds` ends in `time` (`flood seconds` → `flood time`): its cells write
    /// their own unit (`202 ms`), which a header saying seconds contradicted.
    /// Records, thresholds and `strain explain` keep the name as declared.
    package static func displayName(of name: String) -> String {
        let spaced = spacedName(name)
        if spaced == "seconds" { return "time" }
        if spaced.hasSuffix(" seconds") { return spaced.dropLast("seconds".count) + "time" }
        return spaced
    }

    private static func spacedName(_ name: String) -> String {
        let characters = Array(name)
        var out = ""
        for (index, character) in characters.enumerated() {
            let previous = index > 0 ? characters[index - 1] : nil
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if character.isUppercase, let previous, previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                out += " "
                out += next?.isUppercase == true ? String(character) : character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}
