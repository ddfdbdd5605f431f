import Foundation
import StrainKit
import Synchronization

// The fifth article's model: a large form, a class with hundreds of properties,
// many of them objects with hundreds of properties of their own, persisted with
// NSKeyedArchiver. Each class codes itself either by hand (`encode(with:)` and
// `init(coder:)` naming every property) or generically, as a Swift port of the
// article's NSObject category would: every property read by reflection into a
// dictionary and encoded under its name; decoded by assigning each property of a
// default instance through its setter.
//
// Why the properties are not all declared: nobody writes a class with 1,000 stored
// properties by hand, and a class per width (1 to 1,000) would be thousands of
// generated lines. So `FormSection` declares ten real stored properties of the
// kinds a form has (strings, numbers, a shared object, an array, a dictionary,
// nested sections), three of them with `didSet` side effects, and keeps the rest as
// generated properties in one array, presented to reflection as labelled children
// of their own (`field0`, `field1`, …) and written through key paths of their own
// (`\FormSection.[integer: 17]`), as the Objective-C runtime's property list
// presented every declared property to the article's category. What the generic
// coder does per property (box the value as `Any`, bridge it, encode it under its
// label; decode it by label and assign it through a writable key path, setters
// and all) is the same whatever the class's storage looks like; the hand-written
// coder writes each generated property with its typed call, as a thousand lines of
// `coder.encode(field17, forKey: "field17")` would.

/// How the model codes itself and what its setters do in this trial.
///
/// NSKeyedUnarchiver creates each object through `init(coder:)`, which is handed
/// nothing but the coder, so the trial's choice is process-wide: each trial runs in
/// a child process of its own, and `prepare` sets it before any object is built.
struct FormCodingSettings: Sendable {
    var coding: ReflectiveCodingScenario.Coding = .handWritten
    var setters: ReflectiveCodingScenario.Setters = .plain
    /// Generated properties per section, besides the declared ones.
    var generatedProperties = 0
    /// The generic decoder's table for sections of this width.
    var sectionSetters: [PropertySetter<FormSection>] = []

    private static let shared = Mutex(FormCodingSettings())

    /// The trial's settings.
    static var current: FormCodingSettings { shared.withVisibleLock { $0 } }

    /// Sets the trial's settings (in `prepare`, before any object exists).
    static func use(_ settings: FormCodingSettings) { shared.withVisibleLock { $0 = settings } }
}

/// One generated property's value: the kinds take turns (`field0` an Int, `field1`
/// a Double, `field2` a String, `field3` a Bool, `field4` an Int, …).
enum FieldValue: Equatable {
    case integer(Int)
    case double(Double)
    case string(String)
    case bool(Bool)

    /// The payload, as reflection shows a stored property's value.
    var value: Any {
        switch self {
        case .integer(let value): value
        case .double(let value): value
        case .string(let value): value
        case .bool(let value): value
        }
    }

    /// The default instance's value of generated property `index`.
    static func zero(at index: Int) -> FieldValue {
        switch index % 4 {
        case 0: .integer(0)
        case 1: .double(0)
        case 2: .string("")
        default: .bool(false)
        }
    }

    /// A value for generated property `index` of a built form, from `random`.
    static func random(at index: Int, _ random: UInt64) -> FieldValue {
        switch index % 4 {
        case 0: .integer(Int(random % 100_000))
        case 1: .double(Double(random % 10_000) / 100)
        case 2: .string("answer \(random % 1_000)")
        default: .bool(random % 2 == 0)
        }
    }
}

/// The generated properties' names, made once (`field0` … `field999`).
enum FieldKeys {
    static let names = (0..<ReflectiveCodingScenario.maximumProperties).map { "field\($0)" }
}

/// A signature pad's stroke set: an object that does not adopt NSCoding, kept in a
/// section's attachments or answers (the article's "non NSCoding class inside a
/// Foundation collection").
final class Signature: NSObject {
    let strokes: Int
    init(strokes: Int) { self.strokes = strokes }
    override var description: String { "Signature(strokes: \(strokes))" }
}

/// The person filling in the form: one object every section refers to, so the
/// archive holds it once and the decoded form must share it too.
final class Applicant: NSObject, NSCoding {
    var name = ""
    var taxNumber = 0

    override init() {}

    init(name: String, taxNumber: Int) {
        self.name = name
        self.taxNumber = taxNumber
    }

    func encode(with coder: NSCoder) {
        switch FormCodingSettings.current.coding {
        case .handWritten:
            coder.encode(name as NSString, forKey: "name")
            coder.encode(taxNumber, forKey: "taxNumber")
        case .generic:
            // Real reflection: Applicant's stored properties are declared.
            encodeReflectively(Mirror(reflecting: self), with: coder)
        }
    }

    init?(coder: NSCoder) {
        switch FormCodingSettings.current.coding {
        case .handWritten:
            name = coder.decodeObject(forKey: "name") as? String ?? ""
            taxNumber = coder.decodeInteger(forKey: "taxNumber")
            super.init()
        case .generic:
            super.init()
            decodeReflectively(Self.setters, into: self, from: coder)
        }
    }

    static let setters = [PropertySetter("name", \Applicant.name), PropertySetter("taxNumber", \Applicant.taxNumber)]
}

/// One section of the form: ten declared properties, `fields.count` generated
/// ones, and its nested sections.
final class FormSection: NSObject, NSCoding, CustomReflectable {
    // Declared in the order the generic decoder assigns them (reflection's order).
    var title = ""
    /// What the user accepted or typed over (a discount); a new quantity or unit
    /// price recomputes it when setters cascade.
    var total = 0
    var quantity = 0 { didSet { if cascades { total = quantity * unitPrice } } }
    var unitPrice = 0 { didSet { if cascades { total = quantity * unitPrice } } }
    /// Cleared when the country changes, when setters cascade.
    var region = ""
    var country = "" { didSet { if cascades { region = "" } } }
    var applicant = Applicant()
    /// File names, and a `Signature` when the suite puts one in an array.
    var attachments: [Any] = []
    /// Answers by question, and a `Signature` when the suite puts one in a dictionary.
    var answers: [String: Any] = [:]
    var sections: [FormSection] = []
    /// The generated properties.
    var fields: [FieldValue]

    /// The article's `_doNotUpdate`: setters skip their side effects while the
    /// generic decoder assigns (with `setters: guarded`). Not coded.
    var isDecoding = false
    /// What this object's setters do; read once, when it is made.
    let setterBehaviour: ReflectiveCodingScenario.Setters

    /// Whether a setter's side effect runs now.
    var cascades: Bool {
        switch setterBehaviour {
        case .plain: false
        case .cascading: true
        case .guarded: !isDecoding
        }
    }

    /// The declared properties' labels, in order.
    static let declared = ["title", "total", "quantity", "unitPrice", "region", "country", "applicant", "attachments", "answers", "sections"]

    /// A default instance with `generated` generated properties.
    init(generated: Int, setters: ReflectiveCodingScenario.Setters) {
        fields = (0..<generated).map(FieldValue.zero(at:))
        setterBehaviour = setters
    }

    /// Generated property `index`, an Int (`index % 4 == 0`): the key path the generic decoder sets.
    subscript(integer index: Int) -> Int {
        get { if case .integer(let value) = fields[index] { value } else { 0 } }
        set { fields[index] = .integer(newValue) }
    }

    /// Generated property `index`, a Double (`index % 4 == 1`).
    subscript(double index: Int) -> Double {
        get { if case .double(let value) = fields[index] { value } else { 0 } }
        set { fields[index] = .double(newValue) }
    }

    /// Generated property `index`, a String (`index % 4 == 2`).
    subscript(string index: Int) -> String {
        get { if case .string(let value) = fields[index] { value } else { "" } }
        set { fields[index] = .string(newValue) }
    }

    /// Generated property `index`, a Bool (`index % 4 == 3`).
    subscript(bool index: Int) -> Bool {
        get { if case .bool(let value) = fields[index] { value } else { false } }
        set { fields[index] = .bool(newValue) }
    }

    /// Every coded property, declared then generated, as labelled children.
    var customMirror: Mirror {
        var children: [Mirror.Child] = [
            ("title", title), ("total", total), ("quantity", quantity), ("unitPrice", unitPrice), ("region", region),
            ("country", country), ("applicant", applicant), ("attachments", attachments), ("answers", answers), ("sections", sections),
        ]
        children.reserveCapacity(children.count + fields.count)
        for (index, field) in fields.enumerated() {
            children.append((FieldKeys.names[index], field.value))
        }
        return Mirror(self, children: children)
    }

    /// The generic decoder's table for sections with `generated` generated properties.
    static func setters(generated: Int) -> [PropertySetter<FormSection>] {
        var table: [PropertySetter<FormSection>] = [
            PropertySetter("title", \.title), PropertySetter("total", \.total), PropertySetter("quantity", \.quantity),
            PropertySetter("unitPrice", \.unitPrice), PropertySetter("region", \.region), PropertySetter("country", \.country),
            PropertySetter("applicant", \.applicant), PropertySetter("attachments", \.attachments),
            PropertySetter("answers", \.answers), PropertySetter("sections", \.sections),
        ]
        for index in 0..<generated {
            let name = FieldKeys.names[index]
            switch index % 4 {
            case 0: table.append(PropertySetter(name, \.[integer: index]))
            case 1: table.append(PropertySetter(name, \.[double: index]))
            case 2: table.append(PropertySetter(name, \.[string: index]))
            default: table.append(PropertySetter(name, \.[bool: index]))
            }
        }
        return table
    }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        switch FormCodingSettings.current.coding {
        case .handWritten:
            coder.encode(title as NSString, forKey: "title")
            coder.encode(total, forKey: "total")
            coder.encode(quantity, forKey: "quantity")
            coder.encode(unitPrice, forKey: "unitPrice")
            coder.encode(region as NSString, forKey: "region")
            coder.encode(country as NSString, forKey: "country")
            coder.encode(applicant, forKey: "applicant")
            coder.encode(attachments as NSArray, forKey: "attachments")
            coder.encode(answers as NSDictionary, forKey: "answers")
            coder.encode(sections as NSArray, forKey: "sections")
            for (index, field) in fields.enumerated() {
                let key = FieldKeys.names[index]
                switch field {
                case .integer(let value): coder.encode(value, forKey: key)
                case .double(let value): coder.encode(value, forKey: key)
                case .string(let value): coder.encode(value as NSString, forKey: key)
                case .bool(let value): coder.encode(value, forKey: key)
                }
            }
        case .generic:
            encodeReflectively(Mirror(reflecting: self), with: coder)
        }
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        let settings = FormCodingSettings.current
        setterBehaviour = settings.setters
        switch settings.coding {
        case .handWritten:
            // Stored directly, as the article's hand-written examples set their
            // instance variables: an initializer runs no property observers.
            title = coder.decodeObject(forKey: "title") as? String ?? ""
            total = coder.decodeInteger(forKey: "total")
            quantity = coder.decodeInteger(forKey: "quantity")
            unitPrice = coder.decodeInteger(forKey: "unitPrice")
            region = coder.decodeObject(forKey: "region") as? String ?? ""
            country = coder.decodeObject(forKey: "country") as? String ?? ""
            applicant = coder.decodeObject(forKey: "applicant") as? Applicant ?? Applicant()
            attachments = coder.decodeObject(forKey: "attachments") as? [Any] ?? []
            answers = coder.decodeObject(forKey: "answers") as? [String: Any] ?? [:]
            sections = coder.decodeObject(forKey: "sections") as? [FormSection] ?? []
            fields = (0..<settings.generatedProperties).map { index in
                let key = FieldKeys.names[index]
                switch index % 4 {
                case 0: return .integer(coder.decodeInteger(forKey: key))
                case 1: return .double(coder.decodeDouble(forKey: key))
                case 2: return .string(coder.decodeObject(forKey: key) as? String ?? "")
                default: return .bool(coder.decodeBool(forKey: key))
                }
            }
            super.init()
        case .generic:
            // A default instance, then every property assigned through its setter.
            fields = (0..<settings.generatedProperties).map(FieldValue.zero(at:))
            super.init()
            isDecoding = true
            decodeReflectively(settings.sectionSetters, into: self, from: coder)
            isDecoding = false
        }
    }
}
