import Foundation
import Testing

/// Every Swift block of the DocC articles says how it is compiled, in an HTML comment
/// just before it (DocC does not render it), and is compiled so, in a package a user
/// would write (a team that copied a snippet hit one that did not compile):
///
/// - `<!-- snippet: example PATH -->`: a file of the worked example
///   (Tests/Examples/OrderDecoding), shown as it is there (its code lines), where
///   UserPackageTests and CI build and run it.
/// - `<!-- snippet: file Tests/SnippetTests -->`: a whole test file.
/// - `<!-- snippet: scenario members; with: DECLS -->`: members of a public scenario
///   (`DECLS`, `;`-separated, are the members the snippet refers to but does not show).
/// - `<!-- snippet: statements; with: PARAMETERS -->`: the body of a function taking them.
/// - `<!-- snippet: test -->`: a test function, with Strain's and the example's imports.
/// - `<!-- snippet: not compiled: REASON -->`: left out, the reason said.
///
/// The package holds the example's model and scenarios (renamed SnippetOrderModel and
/// SnippetOrderScenarios, so their modules do not replace the example's in the shared
/// scratch folder) and `Orders`, the few names StrainInYourTests' tests take from a
/// user's own module (`deepOrderJSON`, and stand-ins for XMLCoder's `XMLDecoder`).
@Suite(.serialized, .timeLimit(.minutes(60))) struct DocSnippetTests {
    struct Snippet: CustomStringConvertible {
        var article: String
        /// The block's first code line, 1-based.
        var line: Int
        var kind: String
        var with: [String]
        var code: String
        var description: String { "\(article):\(line) (\(kind))" }
    }

    static let repository = FixturePackage.repository.path
    static let example = repository + "/Tests/Examples/OrderDecoding"

    /// Every ```swift block of every catalog under Sources, with the marker before it.
    static func snippets() throws -> [Snippet] {
        let sources = repository + "/Sources"
        let articles = (FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String } ?? [])
            .filter { $0.contains(".docc/") && $0.hasSuffix(".md") }.sorted()
        var found: [Snippet] = []
        for article in articles {
            let lines = try String(contentsOfFile: sources + "/" + article, encoding: .utf8).components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                let fence = lines[index]
                guard fence.trimmingCharacters(in: .whitespaces) == "```swift" else { index += 1; continue }
                let indent = fence.prefix { $0 == " " }.count
                var end = index + 1
                while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
                let code = lines[(index + 1)..<min(end, lines.count)].map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
                let before = lines[..<index].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.trimmingCharacters(in: .whitespaces) ?? ""
                var kind = "unmarked", with: [String] = []
                if before.hasPrefix("<!-- snippet: "), before.hasSuffix(" -->") {
                    let marker = before.dropFirst("<!-- snippet: ".count).dropLast(" -->".count)
                    let parts = marker.components(separatedBy: "; with: ")
                    kind = parts[0]
                    if parts.count > 1 {
                        with = parts[1].components(separatedBy: "; ").map { $0.trimmingCharacters(in: .whitespaces) }
                    }
                }
                found.append(Snippet(article: "Sources/" + article, line: index + 2, kind: kind, with: with, code: code.joined(separator: "\n")))
                index = end + 1
            }
        }
        return found
    }

    /// The code lines of a Swift text: no comments, no blank lines, trimmed.
    static func codeLines(_ text: String) -> [String] {
        text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("//") }
    }

    @Test func everySwiftBlockOfTheArticlesSaysHowItIsCompiled() throws {
        let snippets = try Self.snippets()
        #expect(snippets.count >= 15, "\(snippets)")
        for snippet in snippets {
            let known = snippet.kind.hasPrefix("example ") || snippet.kind.hasPrefix("file ") || snippet.kind.hasPrefix("not compiled: ")
                || ["scenario members", "statements", "test"].contains(snippet.kind)
            #expect(known, "\(snippet): mark the block with <!-- snippet: … --> on the line before it (DocSnippetTests says which)")
        }
        // What is left out stays a short, stated list.
        #expect(snippets.filter { $0.kind.hasPrefix("not compiled: ") }.map(\.description).count <= 1,
                "\(snippets.filter { $0.kind.hasPrefix("not compiled: ") })")
    }

    @Test func snippetsShownAsTheWorkedExamplesFilesAreThoseFiles() throws {
        for snippet in try Self.snippets() where snippet.kind.hasPrefix("example ") {
            let path = Self.example + "/" + snippet.kind.dropFirst("example ".count)
            let file = try String(contentsOfFile: path, encoding: .utf8)
            #expect(Self.codeLines(snippet.code) == Self.codeLines(file), "\(snippet) shows \(path) as it is")
        }
    }

    @Test func everyOtherSwiftBlockCompilesInAPackageAUserWouldWrite() async throws {
        let package = TestFolders.root.appendingPathComponent("doc-snippets-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: package) }
        try Self.writePackage(at: package, snippets: try Self.snippets())
        let (status, output) = try await FixturePackage.locked {
            try? FileManager.default.removeItem(atPath: FixturePackage.scratch + "/debug.yaml")
            try? FileManager.default.removeItem(atPath: FixturePackage.scratch + "/debug/description.json")
            return try await FixturePackage.swift(["build", "--build-tests", "--package-path", package, "--scratch-path", FixturePackage.scratch])
        }
        // Errors name the article and line (each snippet is placed under #sourceLocation).
        let errors = output.split(separator: "\n").filter { $0.contains("error:") }
        #expect(status == 0, "the articles' snippets do not compile:\n\(errors.joined(separator: "\n"))\n\(errors.isEmpty ? output : "")")
    }

    static func writePackage(at package: String, snippets: [Snippet]) throws {
        let files = FileManager.default
        func write(_ text: String, _ path: String) throws {
            try files.createDirectory(atPath: (package + "/" + path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: package + "/" + path, atomically: true, encoding: .utf8)
        }
        try write("""
        // swift-tools-version:6.0
        import PackageDescription

        let package = Package(
            name: "DocSnippets",
            platforms: [.macOS(.v15)],
            dependencies: [.package(name: "Strain", path: "\(repository)")],
            targets: [
                .target(name: "SnippetOrderModel"),
                .target(name: "SnippetOrderScenarios", dependencies: ["SnippetOrderModel", .product(name: "StrainKit", package: "Strain"), .product(name: "StrainHelpers", package: "Strain")]),
                .target(name: "Orders", dependencies: ["SnippetOrderModel"]),
                .target(name: "Snippets", dependencies: ["SnippetOrderModel", .product(name: "StrainKit", package: "Strain"), .product(name: "StrainHelpers", package: "Strain")]),
                .testTarget(name: "SnippetTests", dependencies: ["Orders", "SnippetOrderScenarios", .product(name: "StrainKit", package: "Strain"), .product(name: "StrainTesting", package: "Strain")]),
            ]
        )

        """, "Package.swift")
        // The worked example's model and scenarios, as a user's package has its own.
        for (folder, target) in [("OrderModel", "SnippetOrderModel"), ("OrderScenarios", "SnippetOrderScenarios")] {
            for name in try files.contentsOfDirectory(atPath: example + "/Sources/" + folder) where name.hasSuffix(".swift") {
                let text = try String(contentsOfFile: example + "/Sources/" + folder + "/" + name, encoding: .utf8)
                try write(text.replacingOccurrences(of: "import OrderModel", with: "import SnippetOrderModel"), "Sources/\(target)/\(name)")
            }
        }
        try write("""
        @_exported import SnippetOrderModel
        import Foundation

        /// An order `levels` bundles deep, as JSON: the user's own helper the article's test calls.
        public func deepOrderJSON(levels: Int) -> Data {
            (try? JSONEncoder().encode(Order.nested(id: 1, depth: levels, width: 1))) ?? Data()
        }

        /// Stand-ins for XMLCoder's decoder and a team's XML model (StrainInYourTests'
        /// bisection example): the snippet's calls into Strain are what is compiled.
        public struct XMLDecoder {
            public init() {}
            public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { try JSONDecoder().decode(type, from: data) }
        }
        public struct Node: Decodable {}
        public func nestedXML(levels: Int) -> Data { Data("{}".utf8) }

        """, "Sources/Orders/Orders.swift")

        var snippetFile = "import Foundation\nimport SnippetOrderModel\nimport StrainHelpers\nimport StrainKit\n"
        var testFile = "import Foundation\nimport Orders\nimport SnippetOrderScenarios\nimport StrainKit\nimport StrainTesting\nimport Testing\n"
        for (number, snippet) in snippets.enumerated() {
            let located = "#sourceLocation(file: \"\(repository)/\(snippet.article)\", line: \(snippet.line))\n\(snippet.code)\n#sourceLocation()\n"
            switch snippet.kind {
            case "scenario members":
                var members = ["public static let name = \"snippet-\(number)\"", "public static let summary = \"a snippet of \(snippet.article)\""]
                members += snippet.with
                if !snippet.code.contains("init(parameters:") { members.append("public init(parameters: ParameterValues) {}") }
                if !snippet.code.contains("func prepare(") {
                    members.append("public func prepare(context: ScenarioContext) throws -> Workload { { _ in } }")
                }
                snippetFile += "\npublic struct Snippet\(number): Scenario {\n" + members.map { "    " + $0 + "\n" }.joined() + located + "}\n"
            case "statements":
                snippetFile += "\nfunc snippet\(number)(\(snippet.with.joined(separator: ", "))) throws {\n" + located + "}\n"
            case "test":
                testFile += "\n" + located
            case let kind where kind.hasPrefix("file "):
                try write(located, String(kind.dropFirst("file ".count)) + "/Snippet\(number).swift")
            default:
                continue
            }
        }
        try write(snippetFile, "Sources/Snippets/Snippets.swift")
        try write(testFile, "Tests/SnippetTests/SnippetTests.swift")
    }
}
