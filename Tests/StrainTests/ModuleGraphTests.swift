import Foundation
import Testing

/// The picture of the modules, held by a test: SwiftPM lets a target import any
/// module it reaches through its dependencies, so only this keeps the layering.
///
/// It reads `Package.swift`'s target declarations as text and every `import` line
/// under each Swift target's folder, and fails, naming the file and line, on an
/// import the target does not declare, on a declared edge the design does not
/// draw (`ModuleGraph.allowed`), and on a Swift module over 4,000 lines.
@Suite struct ModuleGraphTests {
    @Test func everyImportIsDeclaredAndEveryEdgeIsDrawn() throws {
        let graph = try ModuleGraph.read(repository: FixturePackage.repository)
        // Not vacuous: the manifest and the sources were really read.
        #expect(graph.targets.count >= 18, "\(graph.targets.map(\.name))")
        #expect(graph.imports.count >= 200, "only \(graph.imports.count) import lines read")
        for name in ["StrainWire", "StrainSuite", "StrainSymbols", "StrainHost", "StrainRunner", "StrainExec", "StrainCLI", "StrainKit"] {
            #expect(graph.imports.contains { $0.target == name }, "no import lines read for \(name)")
        }
        for problem in graph.problems() {
            Issue.record(Comment(rawValue: problem))
        }
    }

    @Test func everyTargetHasARowInTheTableAndEveryRowATarget() throws {
        let graph = try ModuleGraph.read(repository: FixturePackage.repository)
        let declared = Set(graph.targets.filter { !$0.isTest && !$0.isPlugin }.map(\.name))
        #expect(declared.subtracting(ModuleGraph.allowed.keys).sorted() == [], "targets the design does not place")
        #expect(Set(ModuleGraph.allowed.keys).subtracting(declared).sorted() == [], "rows for targets Package.swift does not have")
    }

    @Test func noSwiftModuleIsOverFourThousandLines() throws {
        let graph = try ModuleGraph.read(repository: FixturePackage.repository)
        let sizes = graph.lineCounts()
        #expect((sizes["StrainRunner"] ?? 0) > 1000, "\(sizes)")
        for (module, lines) in sizes.sorted(by: { $0.key < $1.key }) {
            #expect(lines <= ModuleGraph.maximumLines, "\(module) has \(lines) lines of Swift; split it by process or purpose")
        }
    }

    /// The checker itself: an undeclared import and an edge the design forbids are
    /// both caught, in a manifest and sources made up here.
    @Test func theCheckerCatchesAnUndeclaredImportAndAForbiddenEdge() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("module-graph-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = [
            "Package.swift": """
                let package = Package(name: "P", targets: [
                    .target(name: "StrainRecords"),
                    // A comment (with parentheses) between targets.
                    .target(name: "StrainReports", dependencies: ["StrainRecords", "StrainRunner"]),
                    .target(name: "StrainCLI", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
                ])
                """,
            "Sources/StrainRecords/A.swift": "import Foundation\n",
            "Sources/StrainReports/B.swift": "import StrainRecords\nimport StrainRunner\n",
            "Sources/StrainCLI/C.swift": "import ArgumentParser\ninternal import CStrainTools\n",
        ]
        for (path, text) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let graph = try ModuleGraph.read(repository: folder)
        #expect(graph.targets.map(\.name) == ["StrainRecords", "StrainReports", "StrainCLI"])
        #expect(graph.targets.first { $0.name == "StrainCLI" }?.dependencies == ["ArgumentParser"])
        let problems = graph.problems()
        #expect(problems.contains { $0.hasPrefix("Package.swift: StrainReports depends on StrainRunner") })
        #expect(problems.contains { $0.hasPrefix("Sources/StrainCLI/C.swift:2: StrainCLI imports CStrainTools, which Package.swift does not declare") })
        #expect(problems.contains { $0.hasPrefix("Sources/StrainCLI/C.swift:2: StrainCLI imports CStrainTools, an edge the design does not draw") })
        #expect(problems.contains { $0.hasPrefix("Sources/StrainReports/B.swift:2: StrainReports imports StrainRunner, an edge the design does not draw") })
        #expect(problems.count == 4, "\(problems)")
    }
}

/// Package.swift's targets and the sources' imports, read as text.
struct ModuleGraph {
    /// The arrows the design draws (DESIGN.md, "Parts"): what each target may
    /// depend on and import. A new target needs a row here; a new arrow, a reason.
    static let allowed: [String: Set<String>] = [
        // C: the probe over libunwind, the preloadable probe, the parent's C, the faults a scenario calls.
        "CLibunwind": [],
        "CStrainProbe": ["CLibunwind"],
        "CStrainPreload": ["CStrainProbe"],
        "CStrainTools": ["CLibunwind", "CStrainProbe"],
        "CStrainFaults": [],
        // run.json's vocabulary: Foundation only.
        "StrainRecords": [],
        // What crosses between parent and trial.
        "StrainWire": ["StrainRecords"],
        // The SDK: no parent-only C.
        "StrainKit": ["StrainRecords", "CStrainProbe", "CStrainFaults", "Histogram"],
        "StrainHelpers": ["StrainKit"],
        "StrainScenarios": ["StrainKit", "StrainHelpers", "OpenCombine"],
        // The suite language: YAML to a typed suite and plan, against the catalog.
        "StrainSuite": ["StrainRecords", "StrainWire", "StrainKit", "Yams"],
        // Naming addresses: a library the parent uses.
        "StrainSymbols": ["StrainRecords", "StrainWire", "CStrainTools"],
        // Inside a trial: the host, the watchdog, the trial server's copies.
        "StrainHost": ["StrainRecords", "StrainKit", "StrainWire", "CStrainProbe", "CStrainTools"],
        // The parent: the trial pipeline, run and bisect.
        "StrainRunner": ["StrainRecords", "StrainKit", "StrainWire", "StrainSuite", "StrainSymbols", "CStrainProbe", "CStrainTools"],
        // The parent of a program Strain did not build: through the runner's trial pipeline
        // (its verdicts' counts worded by StrainText).
        "StrainExec": ["StrainRecords", "StrainKit", "StrainWire", "StrainSymbols", "StrainRunner", "StrainText", "CStrainProbe", "CStrainTools"],
        // Expectations for Swift Testing: the host in the re-run child, the runner in the test process; no CLI or gate,
        // and the report renderers only under the StrainTestingReports trait (report.html attached); a failure's advice from StrainText.
        "StrainTesting": ["StrainRecords", "StrainKit", "StrainWire", "StrainHost", "StrainRunner", "StrainText", "StrainReports"],
        // Text laid out for a terminal or markup: Foundation, and the records' one way to write a time.
        "StrainText": ["StrainRecords"],
        // Views of records: never the runner, never C.
        "StrainReports": ["StrainRecords", "StrainText"],
        // The gate's views keep hyphenated words whole with StrainText's markup, as the run's do.
        "StrainGate": ["StrainRecords", "StrainText"],
        // The command line: every Swift layer, no C at all.
        "StrainCLI": [
            "StrainRecords", "StrainKit", "StrainSuite", "StrainHost", "StrainRunner", "StrainExec", "StrainReports", "StrainText", "StrainGate", "ArgumentParser",
        ],
        "strain": ["StrainCLI", "StrainScenarios"],
        // The fuzzers (under STRAIN_FUZZ=1): the suite language alone, the records and their reports.
        "FuzzSuiteParser": ["StrainSuite", "StrainKit", "StrainScenarios"],
        "FuzzRunRecord": ["StrainRecords", "StrainReports"],
    ]

    /// Modules of the toolchain any target may import.
    static let system: Set<String> = ["Foundation", "FoundationEssentials", "Glibc", "Musl", "Darwin", "Dispatch", "Synchronization", "_Concurrency", "Testing"]

    static let maximumLines = 4000

    struct Target {
        var name: String
        var kind: String
        var dependencies: [String]
        var path: String
        var isTest: Bool { kind == "testTarget" }
        var isPlugin: Bool { kind == "plugin" }
        var isSwift: Bool { kind != "systemLibrary" && !isPlugin }
    }

    struct Import {
        var target: String
        var module: String
        var file: String
        var line: Int
    }

    var targets: [Target]
    var imports: [Import]
    var repository: URL

    static func read(repository: URL) throws -> ModuleGraph {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = parseTargets(withoutComments(manifest))
        var imports: [Import] = []
        for target in targets where target.isSwift && !target.isTest {
            for file in swiftFiles(under: repository.appendingPathComponent(target.path)) {
                let text = try String(contentsOf: file, encoding: .utf8)
                let relative = String(file.path.dropFirst(repository.path.count + 1))
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    if let module = importedModule(line) {
                        imports.append(Import(target: target.name, module: module, file: relative, line: index + 1))
                    }
                }
            }
        }
        return ModuleGraph(targets: targets, imports: imports, repository: repository)
    }

    /// Every way the sources and the manifest leave the picture, one line each.
    func problems() -> [String] {
        var problems: [String] = []
        let byName = Dictionary(targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for target in targets where !target.isTest && !target.isPlugin {
            guard let allowed = Self.allowed[target.name] else { continue }
            for dependency in target.dependencies where !allowed.contains(dependency) {
                problems.append("Package.swift: \(target.name) depends on \(dependency), an edge the design does not draw")
            }
        }
        for item in imports where !Self.system.contains(item.module) {
            let declared = byName[item.target]?.dependencies ?? []
            if !declared.contains(item.module) {
                problems.append("\(item.file):\(item.line): \(item.target) imports \(item.module), which Package.swift does not declare for it")
            }
            if let allowed = Self.allowed[item.target], !allowed.contains(item.module) {
                problems.append("\(item.file):\(item.line): \(item.target) imports \(item.module), an edge the design does not draw")
            }
        }
        return problems
    }

    /// Lines of Swift per target under Sources.
    func lineCounts() -> [String: Int] {
        var sizes: [String: Int] = [:]
        for target in targets where target.isSwift && !target.isTest && target.path.hasPrefix("Sources/") {
            sizes[target.name] = Self.swiftFiles(under: repository.appendingPathComponent(target.path)).reduce(0) { total, file in
                let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
                return total + text.reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
            }
        }
        return sizes
    }

    /// The module an `import` line names (`@testable`, access levels and kinds of import allowed), or nil.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal", "private", "fileprivate"].contains(first) {
            words = words.dropFirst()
        }
        guard words.first == "import", words.count >= 2 else { return nil }
        words = words.dropFirst()
        if ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(words.first!), words.count >= 2 {
            words = words.dropFirst()
        }
        return String(words.first!.split(separator: ".").first!)
    }

    /// The manifest with `//` comments cut (outside string literals).
    static func withoutComments(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            var inString = false
            var previous: Character = " "
            for index in line.indices {
                let character = line[index]
                if character == "\"" { inString.toggle() }
                if !inString, character == "/", previous == "/" { return line[..<line.index(before: index)] }
                previous = character
            }
            return line
        }.joined(separator: "\n")
    }

    /// `.target(…)`, `.executableTarget(…)`, `.testTarget(…)`, `.systemLibrary(…)` and `.plugin(…)` declarations.
    static func parseTargets(_ manifest: String) -> [Target] {
        let text = Array(manifest)
        var targets: [Target] = []
        var index = 0
        let kinds = ["target", "executableTarget", "testTarget", "systemLibrary", "plugin"]
        while index < text.count {
            guard text[index] == ".", let kind = kinds.first(where: { matches(text, at: index + 1, $0 + "(") }) else {
                index += 1
                continue
            }
            let open = index + 1 + kind.count
            let body = String(balanced(text, from: open, open: "(", close: ")"))
            index = open + 1
            guard let name = stringArgument("name", in: body) else { continue }
            var dependencies: [String] = []
            if let range = body.range(of: "dependencies:") {
                let rest = Array(body[range.upperBound...])
                if let start = rest.firstIndex(of: "[") {
                    let list = String(balanced(rest, from: start, open: "[", close: "]"))
                    dependencies = dependencyNames(list)
                }
            }
            let path = stringArgument("path", in: body) ?? (kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
            targets.append(Target(name: name, kind: kind, dependencies: dependencies, path: path))
        }
        return targets
    }

    private static func matches(_ text: [Character], at index: Int, _ word: String) -> Bool {
        let word = Array(word)
        return index + word.count <= text.count && Array(text[index..<(index + word.count)]) == word
    }

    /// The text between the bracket at `from` and its partner (strings skipped).
    private static func balanced(_ text: [Character], from: Int, open: Character, close: Character) -> ArraySlice<Character> {
        var depth = 0
        var inString = false
        for index in from..<text.count {
            let character = text[index]
            if character == "\"" { inString.toggle() }
            if inString { continue }
            if character == open { depth += 1 }
            if character == close {
                depth -= 1
                if depth == 0 { return text[(from + 1)..<index] }
            }
        }
        return text[(from + 1)...]
    }

    /// `"X"` and `.product(name: "Y", …)` and `.target(name: "Z")` in a dependency list.
    private static func dependencyNames(_ list: String) -> [String] {
        var names: [String] = []
        var depth = 0
        var current = ""
        var inString = false
        var skipNext = false
        for character in list {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == "\"" {
                inString.toggle()
                if !inString {
                    // A top-level string, or the first string inside `.product(name: …)`.
                    if !skipNext { names.append(current) }
                    skipNext = depth > 0
                }
                current = ""
                continue
            }
            if inString { current.append(character) }
            if depth == 0 { skipNext = false }
        }
        return names
    }

    private static func stringArgument(_ label: String, in body: String) -> String? {
        guard let range = body.range(of: label + ":") else { return nil }
        let rest = body[range.upperBound...].drop { $0 == " " || $0 == "\n" }
        guard rest.first == "\"" else { return nil }
        return String(rest.dropFirst().prefix { $0 != "\"" })
    }

    static func swiftFiles(under folder: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }
}
