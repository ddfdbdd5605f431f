import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// The fifth article's system: a wide, nested form persisted with
/// NSKeyedArchiver, coded by hand or generically (reflection to encode, setters to
/// decode), with the decoded form compared with the original as the verdict.
///
/// The article's two failures are parameters: `setters: cascading` gives the model
/// `didSet` observers that update other properties, so generic decoding, which
/// assigns through setters, gives back a form that differs from what was encoded
/// (`invariantViolated`, naming each differing property path with both values);
/// `setters: guarded` is the article's fix, a flag the setters check while
/// decoding. `member` puts an object that does not adopt NSCoding in an array or a
/// dictionary of the form: swift-corelibs-foundation's archiver stops the process
/// with a Swift fatal error (measured: `crashed(SIGILL)`, never a thrown error, never
/// a silent drop).
struct ReflectiveCodingScenario: Scenario {
    static let name = "reflective-coding"
    static let summary = "a wide nested form through NSKeyedArchiver, coded by hand or generically (Mirror to encode, setters to decode): the decoded form compared with the original"
    static let objects = Metric<Int>.count("objects", better: nil, noise: .deterministic, summary: "sections in the form")
    static let codedProperties = Metric<Int>.count("codedProperties", better: nil, noise: .deterministic, summary: "properties coded: sections × (10 declared + generated)")
    static let archiveBytes = Metric<Int>.bytes("archiveBytes", better: .lowerIsBetter, noise: .deterministic, summary: "bytes of the keyed archive")
    static let archiveSeconds = Metric<Double>.seconds("archiveSeconds", better: .lowerIsBetter, noise: .timing, summary: "NSKeyedArchiver's time for the form")
    static let unarchiveSeconds = Metric<Double>.seconds("unarchiveSeconds", better: .lowerIsBetter, noise: .timing, summary: "NSKeyedUnarchiver's time for the form")
    static let mismatches = Metric<Int>.count("mismatches", better: .lowerIsBetter, noise: .deterministic, summary: "properties whose decoded value differs from the encoded one")
    static let metrics: [any MetricDeclaration] = [objects, codedProperties, archiveBytes, archiveSeconds, unarchiveSeconds, mismatches]

    /// How every class of the form codes itself.
    enum Coding: String, CaseIterable, Sendable {
        case handWritten = "hand-written", generic
    }

    /// What the form's setters do besides storing.
    enum Setters: String, CaseIterable, Sendable { case plain, cascading, guarded }

    /// Where the form holds an object that does not adopt NSCoding.
    enum Member: String, CaseIterable, Sendable {
        case none, inArray = "in-array", inDictionary = "in-dictionary"
    }

    /// What the form's answers dictionary holds.
    enum Answers: String, CaseIterable, Sendable { case text, numbers }

    /// What the work does with the form.
    enum Operation: String, CaseIterable, Sendable {
        case roundTrip = "round-trip", archive, unarchive
    }

    /// The widest class the scenario builds.
    static let maximumProperties = 1_000
    /// The most sections a form may have (depth and fan-out together).
    static let maximumObjects = 1_000_000

    static let coding = Parameter<Coding>("coding", default: .generic,
                                          help: "hand-written: encode(with:) and init(coder:) name every property; generic: Mirror lists the properties into a dictionary, each encoded by its label, and decoding assigns each through a writable key path of a default instance (its setter runs)")
    static let setters = Parameter<Setters>("setters", default: .plain,
                                            help: "plain: setters only store; cascading: a new quantity or unit price recomputes the total, a new country clears the region (didSet); guarded: cascading, except while the generic decoder assigns (the article's fix)")
    static let member = Parameter<Member>("member", default: .none,
                                          help: "none; in-array: the form's attachments array holds a Signature, an NSObject that does not adopt NSCoding; in-dictionary: its answers dictionary does")
    static let answers = Parameter<Answers>("answers", default: .text,
                                            help: "text: every answer in a section's answers dictionary ([String: Any]) a string; numbers: the number of dependents an Int from 0 to 3 (generic coding can give 0 and 1 back as Boolean NSNumbers: the archiver stores equal objects once, and whether a Bool property's object comes first follows the property dictionary's order, seeded per process)")
    static let operation = Parameter<Operation>("operation", default: .roundTrip,
                                                help: "round-trip: archive, unarchive and compare, on the strategy; archive: NSKeyedArchiver only; unarchive: archived in prepare, then unarchive and compare")
    static let properties = Parameter<Int>("properties", in: 1...maximumProperties, default: 100,
                                           help: "generated properties per section (an Int, a Double, a String and a Bool in turn), besides its 10 declared ones")
    static let depth = Parameter<Int>("depth", in: 1...100_000, default: 3, help: "levels of nested sections, the form itself the first")
    static let fanout = Parameter<Int>("fanout", in: 1...1_000, default: 4,
                                       help: "sections nested in each section above the last level (the form has at most 1,000,000 sections in all)")
    static let parameters: [any ParameterDeclaration] = [coding, setters, member, answers, operation, properties, depth, fanout]

    static let typicalOutcomes = [
        TypicalOutcome(.invariantViolated, because: "generic decoding with setters: cascading: each setter runs while decoding and rewrites properties decoded before it; the record names each differing path with both values (`Form.total`: encoded 120, decoded 95). With answers: numbers, generic coding of 4 or more properties can give an Int 0 or 1 in the answers dictionary back as a Boolean (by chance: the order of the property dictionary)"),
        TypicalOutcome(.completed, because: "hand-written decoding (an initializer runs no observers), plain setters, or the article's flag (setters: guarded)"),
        TypicalOutcome(.crashed, because: "member: in-array or in-dictionary: swift-corelibs-foundation's NSKeyedArchiver stops the process with `Fatal error: Object … does not conform to NSCoding` from NSArray's or NSDictionary's encode(with:) (a Swift trap, SIGILL): no error is thrown, nothing is dropped silently"),
        TypicalOutcome(.stackOverflow, because: "deep nesting on a 512 KiB stack: the coders recurse once per level, generic decoding with more stack a level"),
    ]
    static let starterRuns = [
        StarterRun(parameters: ["setters": "cascading"], strategies: ["gcd-global", "thread(512KiB)"], expect: [.invariantViolated]),
        StarterRun(parameters: ["setters": "guarded"], strategies: ["gcd-global", "thread(512KiB)"]),
        StarterRun(parameters: ["coding": "hand-written", "setters": "cascading"], strategies: ["gcd-global", "thread(512KiB)"]),
        StarterRun(parameters: ["member": "in-array"], strategies: ["thread(512KiB)"], expect: [.crashed]),
    ]

    let coding: Coding
    let setters: Setters
    let member: Member
    let answers: Answers
    let operation: Operation
    let properties: Int
    let depth: Int
    let fanout: Int

    /// Reads the coding, the setters, the member and the form's shape.
    init(parameters: ParameterValues) {
        coding = parameters[Self.coding]
        setters = parameters[Self.setters]
        member = parameters[Self.member]
        answers = parameters[Self.answers]
        operation = parameters[Self.operation]
        properties = parameters[Self.properties]
        depth = parameters[Self.depth]
        fanout = parameters[Self.fanout]
    }

    /// A form with more sections than ``maximumObjects``.
    struct FormTooLarge: Error, CustomStringConvertible {
        var depth: Int
        var fanout: Int
        var description: String {
            "depth \(depth) with fanout \(fanout) makes more than \(ReflectiveCodingScenario.maximumObjects) sections; lower depth or fanout (fanout 1 makes a chain of depth sections)"
        }
    }

    /// Sections in a form of this depth and fan-out, or nil past ``maximumObjects``.
    var sectionCount: Int? {
        var total = 0
        var level = 1
        for _ in 0..<depth {
            total += level
            if total > Self.maximumObjects { return nil }
            level *= fanout
            if level > Self.maximumObjects { level = Self.maximumObjects + 1 }
        }
        return total
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        guard let sections = sectionCount else { throw FormTooLarge(depth: depth, fanout: fanout) }
        FormCodingSettings.use(FormCodingSettings(coding: coding, setters: setters, generatedProperties: properties,
                                                  sectionSetters: coding == .generic ? FormSection.setters(generated: properties) : []))
        let form = Prepared(makeForm(seed: context.seed))
        context.record(Self.objects, sections)
        context.record(Self.codedProperties, sections * (FormSection.declared.count + properties))
        // Decoded forms are handed back and released here, after the measurement,
        // not on the work's thread: releasing a deep chain recurses too.
        let keepAlive = Mutex<[Prepared<FormSection>]>([])
        let scenario = self

        switch operation {
        case .archive:
            return { executor in
                try executor.perform {
                    try context.unit { _ = try scenario.archive(form.value, context: context) }
                }
            }
        case .roundTrip:
            return { executor in
                try executor.perform {
                    try context.unit {
                        let data = try scenario.archive(form.value, context: context)
                        let decoded = try scenario.unarchive(data, context: context)
                        keepAlive.withVisibleLock { $0.append(Prepared(decoded)) }
                        try scenario.check(decoded, against: form.value, context: context)
                    }
                }
            }
        case .unarchive:
            // Archiving recurses too; prepare runs on a large harness stack.
            let data = try archive(form.value, context: context)
            return { executor in
                try executor.perform {
                    try context.unit {
                        let decoded = try scenario.unarchive(data, context: context)
                        keepAlive.withVisibleLock { $0.append(Prepared(decoded)) }
                        try scenario.check(decoded, against: form.value, context: context)
                    }
                }
            }
        }
    }

    /// The form's keyed archive, timed.
    func archive(_ form: FormSection, context: ScenarioContext) throws -> Data {
        let started = MonotonicClock.nanoseconds
        let data = try NSKeyedArchiver.archivedData(withRootObject: form, requiringSecureCoding: false)
        context.record(Self.archiveSeconds, MonotonicClock.seconds(since: started))
        context.record(Self.archiveBytes, data.count)
        return data
    }

    /// The form decoded from `data`, timed.
    func unarchive(_ data: Data, context: ScenarioContext) throws -> FormSection {
        let started = MonotonicClock.nanoseconds
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        let decoded = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
        unarchiver.finishDecoding()
        context.record(Self.unarchiveSeconds, MonotonicClock.seconds(since: started))
        guard let form = decoded as? FormSection else {
            throw InvariantViolation("the unarchiver returned no form (error: \(unarchiver.error.map { "\($0)" } ?? "none"))")
        }
        return form
    }

    /// The verdict: the decoded form equals the original, property by property.
    func check(_ decoded: FormSection, against original: FormSection, context: ScenarioContext) throws {
        let comparison = RoundTripComparison(original: original, decoded: decoded)
        context.record(Self.mismatches, comparison.count)
        guard comparison.count > 0 else { return }
        let more = comparison.count - comparison.differences.count
        throw InvariantViolation(
            "\(comparison.count) of \(comparison.compared) properties differ after the round trip (\(coding.rawValue) coding, setters: \(setters.rawValue)): "
                + comparison.differences.map(\.description).joined(separator: "; ")
                + (more > 0 ? "; and \(more) more" : "")
                + ". What to do: " + advice(for: comparison.differingProperties))
    }

    /// What to change, for the properties that came back different.
    func advice(for properties: Set<String>) -> String {
        var advice: [String] = []
        if coding == .generic && setters == .cascading {
            advice.append("generic decoding assigns every property through its setter, in declaration order, so a setter's side effect (a didSet that updates another property) rewrote properties decoded before it. Skip side effects while decoding (a flag the setters check, the article's fix: setters: guarded), or assign storage directly in init(coder:).")
        }
        if !properties.isDisjoint(with: ["answers", "attachments"]) {
            advice.append("NSKeyedArchiver stores equal objects once, and on Linux an integer NSNumber 0 or 1 equals the Boolean one, so a number in an Any collection can come back as a Boolean when a Bool was encoded as an object before it (generic coding encodes every Bool as an object). Keep such values typed properties, or encode numbers with their typed calls (encode(_:forKey:) for Int and Bool), as hand-written coding does.")
        }
        if advice.isEmpty {
            advice.append("a property is encoded under one key and decoded under another, or not coded at all: check that encode(with:) and init(coder:) name the same properties with the same keys.")
        }
        return advice.joined(separator: " Also: ")
    }

    /// The form: `depth` levels of sections, `fanout` under each, one applicant shared by all.
    func makeForm(seed: UInt64) -> FormSection {
        var random = SplitMix64(seed: seed)
        let applicant = Applicant(name: "Ada Lovelace", taxNumber: 1815)
        let countries = [("Canada", ["Ontario", "Quebec"]), ("France", ["Bretagne", "Occitanie"]), ("Japan", ["Hokkaido", "Kyushu"])]
        var made = 0
        func section() -> FormSection {
            let section = FormSection(generated: properties, setters: setters)
            section.title = made == 0 ? "Tax return" : "Schedule \(made)"
            section.quantity = 1 + Int(random.next() % 9)
            section.unitPrice = 5 + Int(random.next() % 95)
            // Typed over by the user: what was computed, less a discount.
            section.total = section.quantity * section.unitPrice - Int(random.next() % 10)
            let (country, regions) = countries[Int(random.next() % UInt64(countries.count))]
            section.country = country
            section.region = regions[Int(random.next() % UInt64(regions.count))]
            section.applicant = applicant
            section.attachments = ["scan-\(made).pdf"]
            let dependents = Int(random.next() % 4)
            section.answers = ["dependents": answers == .numbers ? dependents as Any : "\(dependents)", "married": random.next() % 2 == 0 ? "yes" : "no"]
            for index in 0..<properties {
                section.fields[index] = FieldValue.random(at: index, random.next())
            }
            made += 1
            return section
        }
        let form = section()
        switch member {
        case .none: break
        case .inArray: form.attachments.append(Signature(strokes: 12))
        case .inDictionary: form.answers["signature"] = Signature(strokes: 12)
        }
        // Level by level, without recursion: a chain may be 100,000 deep.
        var level = [form]
        for _ in 1..<depth {
            var next: [FormSection] = []
            for parent in level {
                parent.sections = (0..<fanout).map { _ in section() }
                next += parent.sections
            }
            level = next
        }
        return form
    }
}
