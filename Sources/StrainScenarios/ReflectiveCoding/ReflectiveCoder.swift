import Foundation

// The generic coding, ported from the article's NSObject category to Swift on
// Linux, where there is no Objective-C runtime to list properties or call
// `setValue:forKey:`: `Mirror` lists them, and a table of writable key paths sets them.

/// One property the generic decoder can set: its label and an assignment through
/// a writable key path, which runs the property's setter (observers included).
struct PropertySetter<Root: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable because the key paths it holds are immutable values,
    // made once in `prepare` and only read afterwards.
    let label: String
    let assign: (Root, Any?) -> Void

    /// Assigns a decoded value to `keyPath` when it has the property's type, as
    /// `setValue:forKey:` would; a value of another type is left out.
    init<Value>(_ label: String, _ keyPath: ReferenceWritableKeyPath<Root, Value>) {
        self.label = label
        assign = { object, value in
            if let value = value as? Value { object[keyPath: keyPath] = value }
        }
    }
}

/// The article's `dictionaryRepresentation`: every property by its label.
func propertyDictionary(_ mirror: Mirror) -> [String: Any] {
    var properties: [String: Any] = [:]
    properties.reserveCapacity(Int(mirror.children.count))
    for child in mirror.children {
        if let label = child.label { properties[label] = child.value }
    }
    return properties
}

/// The article's `encodeWithCoder:`: the dictionary, each value encoded under its key.
func encodeReflectively(_ mirror: Mirror, with coder: NSCoder) {
    for (key, value) in propertyDictionary(mirror) {
        coder.encode(value, forKey: key)
    }
}

/// The article's `initWithCoder:`: each property of a default instance assigned
/// through its setter, in the table's order.
func decodeReflectively<Root: AnyObject>(_ setters: [PropertySetter<Root>], into object: Root, from coder: NSCoder) {
    for setter in setters {
        setter.assign(object, coder.decodeObject(forKey: setter.label))
    }
}
