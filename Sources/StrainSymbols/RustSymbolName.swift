/// Demangles Rust's v0 symbol names (`_R…`), the scheme Rust's standard library is
/// built with: `_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended`
/// becomes `<std::sys::sync::mutex::futex::Mutex>::lock_contended`.
///
/// libstdc++'s `__cxa_demangle` reads only legacy Rust names (`_ZN…17h…E`), so v0 names
/// reached stalls, dumps and traces raw. The output is LLVM's (`llvm-cxxfilt`, LLVM 14
/// and later): crate names without their hashes, `{closure#0}`, `<T as Trait>`, a vendor
/// suffix in parentheses (`MAIN (.0)`), but LLVM's own `.llvm.123` left out. The grammar is
/// https://doc.rust-lang.org/rustc/symbol-mangling/v0.html.
///
/// - Important: A symbol comes from a file the program under test brought: nesting is
///   bounded (`maximumDepth`), back references may only point backwards and are not
///   followed where nothing is printed, and output past `maximumLength` bytes gives up.
///   Anything that does not parse gives nil, never a partial name.
enum RustSymbolName {
    static let maximumDepth = 300
    static let maximumLength = 8192

    /// The demangled name, or nil when `symbol` is not a well-formed v0 name.
    static func demangle(_ symbol: String) -> String? {
        guard symbol.hasPrefix("_R") else { return nil }
        var bytes = Array(symbol.utf8.dropFirst(2))
        // A vendor-specific suffix is not part of the name: `THREAD_INFO.1` (a second static
        // of that name) is said as LLVM says it, `THREAD_INFO (.1)`; LLVM's own `.llvm.123` is left out.
        var suffix = ""
        if let start = bytes.firstIndex(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "$") }) {
            let text = bytes[start...]
            if !text.starts(with: ".llvm.".utf8), text.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "_")
                || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z")) }) {
                suffix = " (" + String(decoding: text, as: UTF8.self) + ")"
            }
            bytes.removeSubrange(start...)
        }
        guard let first = bytes.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return nil }
        var demangler = Demangler(input: bytes)
        do {
            try demangler.path(inType: false)
            if demangler.position < bytes.count {
                // The instantiating crate: parsed, not printed.
                demangler.printing = false
                try demangler.path(inType: false)
            }
            guard demangler.position == bytes.count else { return nil }
        } catch {
            return nil
        }
        return String(decoding: demangler.output, as: UTF8.self) + suffix
    }

    /// A legacy Rust name (`_ZN…17h<16 hex digits>E`) as libstdc++ demangled it,
    /// `std::rt::lang_start::_$u7b$$u7b$closure$u7d$$u7d$::h168e94e611939a97`, read as
    /// Rust prints it: `std::rt::lang_start::{{closure}}`, without the hash and with
    /// Rust's `$…$` escapes and `..` undone. Nil for any other name, or an escape it does not know.
    static func legacy(mangled: String, demangled: String) -> String? {
        let hash = mangled.utf8.suffix(20)
        guard mangled.hasPrefix("_ZN"), hash.count == 20, hash.first == UInt8(ascii: "1"), hash.dropFirst().first == UInt8(ascii: "7"),
              hash.dropFirst(2).first == UInt8(ascii: "h"), hash.last == UInt8(ascii: "E"),
              hash.dropFirst(3).dropLast().allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f")) })
        else { return nil }
        var components = demangled.components(separatedBy: "::")
        guard components.count > 1, components.removeLast().hasPrefix("h") else { return nil }
        var result: [String] = []
        for component in components {
            var rest = Substring(component)
            // `_$LT$…`: an identifier may not start with `$`, so the compiler put `_` before it.
            if rest.hasPrefix("_$") { rest = rest.dropFirst() }
            var text = ""
            while let first = rest.first {
                if rest.hasPrefix("..") {
                    text += "::"
                    rest = rest.dropFirst(2)
                } else if first == "$" {
                    let body = rest.dropFirst()
                    guard let close = body.firstIndex(of: "$") else { return nil }
                    let escape = body[..<close]
                    let replacement: String
                    switch escape {
                    case "SP": replacement = "@"
                    case "BP": replacement = "*"
                    case "RF": replacement = "&"
                    case "LT": replacement = "<"
                    case "GT": replacement = ">"
                    case "LP": replacement = "("
                    case "RP": replacement = ")"
                    case "C": replacement = ","
                    default:
                        guard escape.hasPrefix("u"), escape.count <= 7, let value = UInt32(escape.dropFirst(), radix: 16),
                              let scalar = UnicodeScalar(value), value >= 0x20, value != 0x7f else { return nil }
                        replacement = String(scalar)
                    }
                    text += replacement
                    rest = body[body.index(after: close)...]
                } else {
                    text.append(first)
                    rest = rest.dropFirst()
                }
            }
            result.append(text)
        }
        return result.joined(separator: "::")
    }

    struct Malformed: Error {}

    struct Demangler {
        let input: [UInt8]
        var position = 0
        var output: [UInt8] = []
        var printing = true
        var depth = 0
        var boundLifetimes = 0

        init(input: [UInt8]) { self.input = input }

        // MARK: Reading

        func peek() -> UInt8? { position < input.count ? input[position] : nil }

        mutating func next() throws -> UInt8 {
            guard position < input.count else { throw Malformed() }
            defer { position += 1 }
            return input[position]
        }

        mutating func eat(_ character: Character) -> Bool {
            guard peek() == character.asciiValue else { return false }
            position += 1
            return true
        }

        /// `_` is 0; otherwise digits 0-9a-zA-Z then `_`, plus one. 64 bits: a crate's
        /// disambiguator is a hash.
        mutating func base62() throws -> UInt64 {
            if eat("_") { return 0 }
            var value: UInt64 = 0
            while true {
                let character = try next()
                if character == UInt8(ascii: "_") { break }
                let digit: UInt64
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(character - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = 10 + UInt64(character - UInt8(ascii: "a"))
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = 36 + UInt64(character - UInt8(ascii: "A"))
                default: throw Malformed()
                }
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 62)
                let (sum, overflowSum) = times.addingReportingOverflow(digit)
                guard !overflowTimes, !overflowSum else { throw Malformed() }
                value = sum
            }
            guard value < UInt64.max else { throw Malformed() }
            return value + 1
        }

        /// `tag` then a base-62 number, plus one; 0 without the tag.
        mutating func optionalBase62(_ tag: Character) throws -> UInt64 {
            guard eat(tag) else { return 0 }
            let value = try base62()
            guard value < UInt64.max else { throw Malformed() }
            return value + 1
        }

        mutating func decimal() throws -> Int {
            guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { throw Malformed() }
            if eat("0") { return 0 }
            var value = 0
            while let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                position += 1
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
                guard !overflowTimes, !overflowSum else { throw Malformed() }
                value = sum
            }
            return value
        }

        /// `[u] <length> [_] <bytes>`: the bytes, and whether they are Punycode.
        mutating func identifier() throws -> (name: ArraySlice<UInt8>, punycode: Bool) {
            let punycode = eat("u")
            let length = try decimal()
            _ = eat("_")
            guard length <= input.count - position else { throw Malformed() }
            let name = input[position..<(position + length)]
            position += length
            guard name.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "_") }) else { throw Malformed() }
            return (name, punycode)
        }

        // MARK: Writing

        mutating func print(_ text: String) throws {
            guard printing else { return }
            output += text.utf8
            guard output.count <= RustSymbolName.maximumLength else { throw Malformed() }
        }

        mutating func print<Bytes: Sequence>(bytes: Bytes) throws where Bytes.Element == UInt8 {
            guard printing else { return }
            output += bytes
            guard output.count <= RustSymbolName.maximumLength else { throw Malformed() }
        }

        mutating func printIdentifier(_ identifier: (name: ArraySlice<UInt8>, punycode: Bool)) throws {
            guard printing else { return }
            if identifier.punycode {
                guard let decoded = Punycode.decode(identifier.name) else { throw Malformed() }
                try print(decoded)
            } else {
                try print(bytes: identifier.name)
            }
        }

        mutating func printLifetime(_ index: UInt64) throws {
            if index == 0 { return try print("'_") }
            guard index - 1 < UInt64(boundLifetimes) else { throw Malformed() }
            let distance = boundLifetimes - Int(index)
            if distance < 26 {
                try print("'" + String(UnicodeScalar(UInt8(ascii: "a") + UInt8(distance))))
            } else {
                try print("'z\(distance - 26 + 1)")
            }
        }

        // MARK: Grammar

        mutating func enter() throws {
            depth += 1
            guard depth <= RustSymbolName.maximumDepth else { throw Malformed() }
        }

        /// `B <base-62>`: runs `body` at an earlier position, only when printing.
        mutating func backReference(_ body: (inout Demangler) throws -> Void) throws {
            let start = position - 1
            let target = try base62()
            guard target < UInt64(start) else { throw Malformed() }
            guard printing else { return }
            let saved = position
            position = Int(target)
            try enter()
            defer { depth -= 1 }
            try body(&self)
            position = saved
        }

        /// A path; returns whether generic arguments were left open (`leaveOpen`) for a
        /// `dyn Trait`'s associated types.
        @discardableResult
        mutating func path(inType: Bool, leaveOpen: Bool = false) throws -> Bool {
            try enter()
            defer { depth -= 1 }
            switch try next() {
            case UInt8(ascii: "C"):
                _ = try optionalBase62("s")
                try printIdentifier(try identifier())
            case UInt8(ascii: "M"):
                try implPath(inType: inType)
                try print("<")
                try type()
                try print(">")
            case UInt8(ascii: "X"):
                try implPath(inType: inType)
                try print("<")
                try type()
                try print(" as ")
                try path(inType: true)
                try print(">")
            case UInt8(ascii: "Y"):
                try print("<")
                try type()
                try print(" as ")
                try path(inType: true)
                try print(">")
            case UInt8(ascii: "N"):
                let namespace = try next()
                guard isLetter(namespace) else { throw Malformed() }
                try path(inType: inType)
                let disambiguator = try optionalBase62("s")
                let name = try identifier()
                if namespace >= UInt8(ascii: "A"), namespace <= UInt8(ascii: "Z") {
                    // Closures, shims and other special namespaces: `{closure#0}`, `{shim:vtable#0}`.
                    let kind = namespace == UInt8(ascii: "C") ? "closure" : namespace == UInt8(ascii: "S") ? "shim" : String(UnicodeScalar(namespace))
                    try print("::{" + kind)
                    if !name.name.isEmpty {
                        try print(":")
                        try printIdentifier(name)
                    }
                    try print("#\(disambiguator)}")
                } else if !name.name.isEmpty {
                    try print("::")
                    try printIdentifier(name)
                }
            case UInt8(ascii: "I"):
                try path(inType: inType)
                // In a value's path the arguments need `::`; in a type's they are optional.
                if !inType { try print("::") }
                try print("<")
                var count = 0
                while !eat("E") {
                    if count > 0 { try print(", ") }
                    try genericArgument()
                    count += 1
                }
                if leaveOpen { return true }
                try print(">")
            case UInt8(ascii: "B"):
                var open = false
                try backReference { open = try $0.path(inType: inType, leaveOpen: leaveOpen) }
                return open
            default:
                throw Malformed()
            }
            return false
        }

        /// The path an impl is in: parsed, never printed.
        mutating func implPath(inType: Bool) throws {
            let wasPrinting = printing
            printing = false
            defer { printing = wasPrinting }
            _ = try optionalBase62("s")
            try path(inType: inType)
        }

        mutating func genericArgument() throws {
            if eat("L") {
                try printLifetime(try base62())
            } else if eat("K") {
                try constant()
            } else {
                try type()
            }
        }

        static func basicType(_ tag: UInt8) -> String? {
            switch tag {
            case UInt8(ascii: "a"): "i8"
            case UInt8(ascii: "b"): "bool"
            case UInt8(ascii: "c"): "char"
            case UInt8(ascii: "d"): "f64"
            case UInt8(ascii: "e"): "str"
            case UInt8(ascii: "f"): "f32"
            case UInt8(ascii: "h"): "u8"
            case UInt8(ascii: "i"): "isize"
            case UInt8(ascii: "j"): "usize"
            case UInt8(ascii: "l"): "i32"
            case UInt8(ascii: "m"): "u32"
            case UInt8(ascii: "n"): "i128"
            case UInt8(ascii: "o"): "u128"
            case UInt8(ascii: "s"): "i16"
            case UInt8(ascii: "t"): "u16"
            case UInt8(ascii: "u"): "()"
            case UInt8(ascii: "v"): "..."
            case UInt8(ascii: "x"): "i64"
            case UInt8(ascii: "y"): "u64"
            case UInt8(ascii: "z"): "!"
            case UInt8(ascii: "p"): "_"
            default: nil
            }
        }

        mutating func type() throws {
            try enter()
            defer { depth -= 1 }
            let start = position
            let tag = try next()
            if let basic = Self.basicType(tag) { return try print(basic) }
            switch tag {
            case UInt8(ascii: "A"):
                try print("[")
                try type()
                try print("; ")
                try constant()
                try print("]")
            case UInt8(ascii: "S"):
                try print("[")
                try type()
                try print("]")
            case UInt8(ascii: "T"):
                try print("(")
                var count = 0
                while !eat("E") {
                    if count > 0 { try print(", ") }
                    try type()
                    count += 1
                }
                if count == 1 { try print(",") }
                try print(")")
            case UInt8(ascii: "R"), UInt8(ascii: "Q"):
                try print("&")
                if eat("L") {
                    let lifetime = try base62()
                    if lifetime != 0 {
                        try printLifetime(lifetime)
                        try print(" ")
                    }
                }
                if tag == UInt8(ascii: "Q") { try print("mut ") }
                try type()
            case UInt8(ascii: "P"):
                try print("*const ")
                try type()
            case UInt8(ascii: "O"):
                try print("*mut ")
                try type()
            case UInt8(ascii: "F"):
                try functionSignature()
            case UInt8(ascii: "D"):
                try dynBounds()
                guard eat("L") else { throw Malformed() }
                let lifetime = try base62()
                if lifetime != 0 {
                    try print(" + ")
                    try printLifetime(lifetime)
                }
            case UInt8(ascii: "B"):
                try backReference { try $0.type() }
            default:
                position = start
                try path(inType: true)
            }
        }

        mutating func binder() throws {
            let count = try optionalBase62("G")
            guard count > 0 else { return }
            // Each bound lifetime is used later, at least a byte each: more than the rest of the input is malformed.
            guard count < UInt64(input.count - position) else { throw Malformed() }
            try print("for<")
            for index in 0..<count {
                boundLifetimes += 1
                if index > 0 { try print(", ") }
                try printLifetime(1)
            }
            try print("> ")
        }

        mutating func functionSignature() throws {
            let saved = boundLifetimes
            defer { boundLifetimes = saved }
            try binder()
            if eat("U") { try print("unsafe ") }
            if eat("K") {
                try print("extern \"")
                if eat("C") {
                    try print("C")
                } else {
                    let abi = try identifier()
                    guard !abi.punycode else { throw Malformed() }
                    try print(bytes: abi.name.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 })
                }
                try print("\" ")
            }
            try print("fn(")
            var count = 0
            while !eat("E") {
                if count > 0 { try print(", ") }
                try type()
                count += 1
            }
            try print(")")
            if !eat("u") {
                try print(" -> ")
                try type()
            }
        }

        mutating func dynBounds() throws {
            let saved = boundLifetimes
            defer { boundLifetimes = saved }
            try print("dyn ")
            try binder()
            var count = 0
            while !eat("E") {
                if count > 0 { try print(" + ") }
                var open = try path(inType: true, leaveOpen: true)
                while eat("p") {
                    try print(open ? ", " : "<")
                    open = true
                    try printIdentifier(try identifier())
                    try print(" = ")
                    try type()
                }
                if open { try print(">") }
                count += 1
            }
        }

        mutating func constant() throws {
            try enter()
            defer { depth -= 1 }
            if eat("B") { return try backReference { try $0.constant() } }
            let tag = try next()
            switch tag {
            case UInt8(ascii: "a"), UInt8(ascii: "s"), UInt8(ascii: "l"), UInt8(ascii: "x"), UInt8(ascii: "n"), UInt8(ascii: "i"),
                 UInt8(ascii: "h"), UInt8(ascii: "t"), UInt8(ascii: "m"), UInt8(ascii: "y"), UInt8(ascii: "o"), UInt8(ascii: "j"):
                if eat("n") { try print("-") }
                let (value, digits) = try hexadecimal()
                if let value, digits.count <= 16 { try print("\(value)") } else { try print("0x"); try print(bytes: digits) }
            case UInt8(ascii: "b"):
                let (value, digits) = try hexadecimal()
                guard digits.count == 1, let value, value <= 1 else { throw Malformed() }
                try print(value == 1 ? "true" : "false")
            case UInt8(ascii: "c"):
                let (value, digits) = try hexadecimal()
                guard digits.count <= 6, let value, let scalar = UnicodeScalar(UInt32(value)) else { throw Malformed() }
                try print("'" + Self.escaped(scalar) + "'")
            case UInt8(ascii: "p"):
                try print("_")
            default:
                throw Malformed()
            }
        }

        /// Hexadecimal digits up to `_`: their value (nil past 64 bits) and the digits.
        mutating func hexadecimal() throws -> (UInt64?, ArraySlice<UInt8>) {
            let start = position
            var value: UInt64? = 0
            if eat("0") {
                guard eat("_") else { throw Malformed() }
                return (0, input[start..<(position - 1)])
            }
            while true {
                let character = try next()
                if character == UInt8(ascii: "_"), position - 1 > start { break }
                let digit: UInt64
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(character - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = 10 + UInt64(character - UInt8(ascii: "a"))
                default: throw Malformed()
                }
                if let current = value {
                    let (times, overflow) = current.multipliedReportingOverflow(by: 16)
                    value = overflow ? nil : times + digit
                }
            }
            return (value, input[start..<(position - 1)])
        }

        static func escaped(_ scalar: UnicodeScalar) -> String {
            switch scalar {
            case "\t": return "\\t"
            case "\r": return "\\r"
            case "\n": return "\\n"
            case "\\": return "\\\\"
            case "'": return "\\'"
            default:
                if scalar.value >= 0x20, scalar.value < 0x7f { return String(scalar) }
                return "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }

        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        }

        func isAlphanumeric(_ byte: UInt8) -> Bool {
            isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
    }

    /// RFC 3492's decoder, as v0 uses it: the last `_` (Punycode's `-`) ends the plain part.
    enum Punycode {
        static func decode(_ encoded: ArraySlice<UInt8>) -> String? {
            var scalars: [UInt32] = []
            var rest = encoded[...]
            if let delimiter = encoded.lastIndex(of: UInt8(ascii: "_")) {
                scalars = encoded[..<delimiter].map { UInt32($0) }
                rest = encoded[(delimiter + 1)...]
            }
            let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
            var n = 128, i = 0, bias = 72
            var index = rest.startIndex
            while index < rest.endIndex {
                let oldI = i
                var weight = 1
                var k = base
                while true {
                    guard index < rest.endIndex else { return nil }
                    let character = rest[index]
                    index += 1
                    let digit: Int
                    switch character {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = Int(character - UInt8(ascii: "a"))
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = 26 + Int(character - UInt8(ascii: "0"))
                    default: return nil
                    }
                    let (product, overflowProduct) = digit.multipliedReportingOverflow(by: weight)
                    let (sum, overflowSum) = i.addingReportingOverflow(product)
                    guard !overflowProduct, !overflowSum, sum <= 0x10FFFF * 64 else { return nil }
                    i = sum
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if digit < t { break }
                    let (nextWeight, overflowWeight) = weight.multipliedReportingOverflow(by: base - t)
                    guard !overflowWeight else { return nil }
                    weight = nextWeight
                    k += base
                }
                let length = scalars.count + 1
                // Adapt the bias.
                var delta = oldI == 0 ? (i - oldI) / damp : (i - oldI) / 2
                delta += delta / length
                var shifts = 0
                while delta > ((base - tMin) * tMax) / 2 {
                    delta /= base - tMin
                    shifts += base
                }
                bias = shifts + ((base - tMin + 1) * delta) / (delta + skew)
                n += i / length
                i %= length
                guard n <= 0x10FFFF, scalars.count < RustSymbolName.maximumLength else { return nil }
                scalars.insert(UInt32(n), at: i)
                i += 1
            }
            var text = ""
            for value in scalars {
                guard let scalar = UnicodeScalar(value) else { return nil }
                text.unicodeScalars.append(scalar)
            }
            return text
        }
    }
}
