import Foundation
import Testing

/// Every public symbol a scenario author sees carries a doc comment: the
/// declarations of the SDK products' modules, and the cases and requirements
/// of their public enums and protocols.
@Suite struct SDKDocumentationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The modules of the products a user depends on: StrainKit (which re-exports
    /// StrainRecords), StrainHelpers, the built-ins' StrainScenarios and StrainCLI.
    static let modules = ["Sources/StrainKit", "Sources/StrainHelpers", "Sources/StrainRecords", "Sources/StrainScenarios", "Sources/StrainCLI"]

    /// `path:line: declaration` for each public declaration with no `///` line
    /// right above it (attributes may sit between).
    static func undocumented(in folder: String) -> [String] {
        undocumentedAndScanned(in: folder).missing
    }

    /// The undocumented declarations under `folder` and how many Swift files were read.
    static func undocumentedAndScanned(in folder: String) -> (missing: [String], scanned: Int) {
        let declaration = /^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:public|open)\s+(?:(?:static|final|override|mutating|nonisolated|convenience|required|class|indirect)\s+)*(func|var|let|init|subscript|struct|class|enum|protocol|actor|typealias|extension)\b/
        let member = /^\s+(?:case\s+[`\w]|(?:static\s+|mutating\s+)*(?:func|var|init|subscript|associatedtype)\b)/
        let opener = /^\s*(?:@\w+\s+)*(?:(?:public|package|private|fileprivate|internal)\s+)?(?:indirect\s+|final\s+)?(enum|protocol|struct|class|actor|extension)\b/
        let path = repository.appendingPathComponent(folder).path
        let files = (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".swift") }.sorted()
        var missing: [String] = []
        var scanned = 0
        for file in files {
            guard let text = try? String(contentsOfFile: path + "/" + file, encoding: .utf8) else { continue }
            scanned += 1
            let lines = text.components(separatedBy: "\n")
            // Bodies of public enums and protocols, whose cases and requirements are public without the word.
            var bodies: [(checked: Bool, depth: Int)] = []
            var depth = 0
            for (index, line) in lines.enumerated() {
                let match = line.firstMatch(of: declaration)
                let kind = match.map { String($0.1) }
                let inCheckedBody = bodies.last.map { $0.checked && $0.depth == depth } ?? false
                if (match != nil && kind != "extension") || (inCheckedBody && line.firstMatch(of: member) != nil) {
                    var above = index - 1
                    while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
                    if above < 0 || !lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                        missing.append("\(folder)/\(file):\(index + 1): \(line.trimmingCharacters(in: .whitespaces).prefix(90))")
                    }
                }
                if let opened = line.firstMatch(of: opener), line.contains("{") {
                    let checked = (kind == "enum" || kind == "protocol") && ["enum", "protocol"].contains(String(opened.1))
                    bodies.append((checked, depth + 1))
                }
                depth += line.filter { $0 == "{" }.count - line.filter { $0 == "}" }.count
                while let last = bodies.last, depth < last.depth { bodies.removeLast() }
            }
        }
        return (missing, scanned)
    }

    @Test func everyPublicSymbolOfTheSDKProductsHasADocComment() {
        let results = Self.modules.map { (module: $0, result: Self.undocumentedAndScanned(in: $0)) }
        // A module folder that moved would be scanned as empty and pass: each must hold files.
        for (module, result) in results {
            #expect(result.scanned >= 3, "\(module): \(result.scanned) Swift files read; did the module move?")
        }
        let missing = results.flatMap(\.result.missing)
        #expect(missing.isEmpty, "public symbols without a doc comment (\(missing.count)):\n\(missing.joined(separator: "\n"))")
    }

    @Test func theCheckerFindsAnUndocumentedDeclarationCaseAndRequirement() throws {
        let folder = "Tests/StrainTests/.doc-check-\(UUID().uuidString)"
        let path = Self.repository.appendingPathComponent(folder).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
            /// Documented.
            public enum Mode {
                /// Documented.
                case one
                case two
            }
            /// Documented.
            public protocol Step {
                func run()
            }
            @inlinable
            public func bare() {}
            """.write(toFile: path + "/Sample.swift", atomically: true, encoding: .utf8)
        let missing = Self.undocumented(in: folder)
        #expect(missing.count == 3, "\(missing)")
        #expect(missing.contains { $0.hasSuffix(":5: case two") } && missing.contains { $0.hasSuffix(":9: func run()") } && missing.contains { $0.hasSuffix(":12: public func bare() {}") })
    }
}
