import Foundation

/// What decoding gave back against what was encoded: every property of every
/// section compared, depth first without recursion, each object once.
///
/// The walk pairs each original object with its decoded one and remembers the
/// pairs, so a cycle ends the walk, and an object the original shares (the
/// applicant every section refers to) must come back shared: a decoded copy per
/// reference is a difference too.
struct RoundTripComparison {
    /// One property whose decoded value is not what was encoded.
    struct Difference: CustomStringConvertible {
        /// `Form.sections[2].total`.
        var path: String
        var encoded: String
        var decoded: String
        /// "`Form.total`: encoded 120, decoded 95".
        var description: String { "`\(path)`: encoded \(encoded), decoded \(decoded)" }
    }

    /// The first differences found, in walk order (at most ``kept``).
    private(set) var differences: [Difference] = []
    /// How many properties differ in all.
    private(set) var count = 0
    /// How many properties were compared.
    private(set) var compared = 0
    /// The names of the properties that differ somewhere (`total`, `answers`).
    private(set) var differingProperties: Set<String> = []
    /// The differences kept for the message.
    static let kept = 5

    /// Compares `decoded` with `original`.
    init(original: FormSection, decoded: FormSection) {
        // Paths are made only for a difference: each pending pair points at its parent's node.
        var nodes: [(parent: Int, name: String)] = [(-1, "Form")]
        var pending: [(FormSection, FormSection, node: Int)] = [(original, decoded, 0)]
        var pairs: [ObjectIdentifier: ObjectIdentifier] = [:]
        func path(_ node: Int, _ property: String) -> String {
            var names = [property]
            var current = node
            while current >= 0 {
                names.append(nodes[current].name)
                current = nodes[current].parent
            }
            return names.reversed().joined(separator: ".")
        }
        func note(_ node: Int, _ property: String, _ encoded: @autoclosure () -> String, _ decoded: @autoclosure () -> String, differ: Bool) {
            compared += 1
            guard differ else { return }
            count += 1
            differingProperties.insert(property)
            if differences.count < Self.kept { differences.append(Difference(path: path(node, property), encoded: encoded(), decoded: decoded())) }
        }
        /// Whether `decoded` is the object `original` was decoded to before (or the first time, records it).
        func sameIdentity(_ original: AnyObject, _ decoded: AnyObject) -> (first: Bool, same: Bool) {
            let key = ObjectIdentifier(original)
            if let seen = pairs[key] { return (false, seen == ObjectIdentifier(decoded)) }
            pairs[key] = ObjectIdentifier(decoded)
            return (true, true)
        }
        while let (a, b, node) = pending.popLast() {
            let identity = sameIdentity(a, b)
            if !identity.first {
                note(node, "self", "a section seen before", "a different object", differ: !identity.same)
                continue
            }
            note(node, "title", quoted(a.title), quoted(b.title), differ: a.title != b.title)
            note(node, "total", "\(a.total)", "\(b.total)", differ: a.total != b.total)
            note(node, "quantity", "\(a.quantity)", "\(b.quantity)", differ: a.quantity != b.quantity)
            note(node, "unitPrice", "\(a.unitPrice)", "\(b.unitPrice)", differ: a.unitPrice != b.unitPrice)
            note(node, "region", quoted(a.region), quoted(b.region), differ: a.region != b.region)
            note(node, "country", quoted(a.country), quoted(b.country), differ: a.country != b.country)
            let applicant = sameIdentity(a.applicant, b.applicant)
            note(node, "applicant", "the form's shared applicant", "a copy of its own", differ: !applicant.same)
            if applicant.first {
                note(node, "applicant.name", quoted(a.applicant.name), quoted(b.applicant.name), differ: a.applicant.name != b.applicant.name)
                note(node, "applicant.taxNumber", "\(a.applicant.taxNumber)", "\(b.applicant.taxNumber)", differ: a.applicant.taxNumber != b.applicant.taxNumber)
            }
            // Collections of `Any` compare as Foundation compares them (NSArray's
            // and NSDictionary's isEqual), which on Linux tells a Boolean NSNumber
            // from an integer one of the same value.
            note(node, "attachments", listed(a.attachments.map(describe)), listed(b.attachments.map(describe)),
                 differ: !(a.attachments as NSArray).isEqual(b.attachments as NSArray))
            note(node, "answers", listed(a.answers.mapValues(describe)), listed(b.answers.mapValues(describe)),
                 differ: !(a.answers as NSDictionary).isEqual(b.answers as NSDictionary))
            note(node, "fields.count", "\(a.fields.count)", "\(b.fields.count)", differ: a.fields.count != b.fields.count)
            for (index, (left, right)) in zip(a.fields, b.fields).enumerated() {
                note(node, FieldKeys.names[index], describe(left.value), describe(right.value), differ: left != right)
            }
            note(node, "sections.count", "\(a.sections.count)", "\(b.sections.count)", differ: a.sections.count != b.sections.count)
            for (index, (left, right)) in zip(a.sections, b.sections).enumerated().reversed() {
                nodes.append((node, "sections[\(index)]"))
                pending.append((left, right, nodes.count - 1))
            }
        }
    }
}

private func quoted(_ text: String) -> String { "\"\(text)\"" }

private func describe(_ value: Any) -> String {
    if let text = value as? String { return quoted(text) }
    return "\(value)"
}

private func listed(_ values: [String]) -> String { "[\(values.joined(separator: ", "))]" }

private func listed(_ values: [String: String]) -> String {
    "[\(values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))]"
}
