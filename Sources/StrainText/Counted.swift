/// A count with its noun in the right number: `1 trial`, `2 trials`, `0 trials`.
///
/// - Parameters:
///   - count: how many.
///   - noun: the singular (`trial`, `thread`, `A/A run`).
///   - plural: the plural where it is not the singular and an `s` (`children`).
public func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : (plural ?? noun + "s"))"
}
