import Foundation
import StrainKit
import Testing

/// Every strategy in `StrategySpec.catalog`, read from its syntax (`thread-pool(n, stack)`):
/// its limits, its help and its errors agree, so a strategy added to the catalog is
/// checked here without a new line in this file (unless it brings a new kind of argument).
@Suite struct StrategyCatalogTests {
    /// What a test writes for one argument placeholder of a strategy's syntax.
    struct Placeholder {
        /// Values that must parse: both ends of the range, or every choice.
        var accepted: [String]
        /// Values that must be refused, each with what the refusal must name (the limit or the choices).
        var refused: [(value: String, names: String)]
        /// What the help says of the argument.
        var help: String
    }

    static func placeholder(_ name: String) -> Placeholder? {
        switch name {
        case "n", "width":
            let range = 1...StrategySpec.maximumPoolThreads
            let limit = "from \(range.lowerBound) to \(range.upperBound)"
            return Placeholder(accepted: ["\(range.lowerBound)", "\(range.upperBound)"],
                               refused: [("\(range.lowerBound - 1)", limit), ("\(range.upperBound + 1)", limit), ("many", limit)],
                               help: "\(name) is \(limit)")
        case "stack":
            let (low, high) = (StrategySpec.minimumStackBytes, StrategySpec.maximumThreadStackBytes)
            return Placeholder(accepted: [ByteSize.exact(low), ByteSize.exact(high)],
                               refused: [(ByteSize.exact(low - 1), "under \(ByteSize.exact(low))"), (ByteSize.exact(high + 1), "over \(ByteSize.exact(high))"),
                                         ("lots", "512KiB, 1MiB or 8MiB")],
                               help: "stack is from \(ByteSize.exact(low)) to \(ByteSize.exact(high))")
        case "qos":
            let names = QualityOfServiceName.allCases.map(\.rawValue)
            return Placeholder(accepted: names, refused: [("fast", names.joined(separator: ", "))], help: "qos is one of \(names.joined(separator: ", "))")
        case "priority":
            let names = TaskPriorityName.allCases.map(\.rawValue)
            return Placeholder(accepted: names, refused: [("urgent", names.joined(separator: ", "))], help: "priority is one of \(names.joined(separator: ", "))")
        default:
            return nil
        }
    }

    /// A catalog entry split into its name and argument placeholders.
    struct Entry {
        var name: String
        var placeholders: [(name: String, values: Placeholder)]
        var summary: String

        /// The strategy written with these argument texts.
        func text(_ arguments: [String]) -> String {
            arguments.isEmpty ? name : "\(name)(\(arguments.joined(separator: ", ")))"
        }
    }

    static func entries() throws -> [Entry] {
        try StrategySpec.catalog.map { syntax, summary in
            let name = String(syntax.prefix { $0 != "(" })
            let inside = syntax.dropFirst(name.count).dropFirst().dropLast()
            let names = inside.isEmpty ? [] : inside.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let placeholders = try names.map { placeholder in
                (placeholder, try #require(Self.placeholder(placeholder), "\(syntax): no values for the placeholder '\(placeholder)'; teach this test its range"))
            }
            return Entry(name: name, placeholders: placeholders, summary: summary)
        }
    }

    static func refusal(_ text: String) -> String? {
        do {
            _ = try StrategySpec(parsing: text)
            return nil
        } catch {
            return error.description
        }
    }

    /// Every combination of accepted values: both ends of every range, every choice.
    static func combinations(_ entry: Entry) -> [[String]] {
        entry.placeholders.reduce([[]]) { partial, placeholder in
            partial.flatMap { prefix in placeholder.values.accepted.map { prefix + [$0] } }
        }
    }

    @Test func everyStrategyAcceptsBothEndsOfItsRangesAndReadsBackWhatItPrints() throws {
        let entries = try Self.entries()
        #expect(Set(entries.map(\.name)).count == entries.count, "each strategy is listed once")
        for entry in entries {
            for arguments in Self.combinations(entry) {
                let text = entry.text(arguments)
                let strategy = try StrategySpec(parsing: text)
                #expect(strategy.description.prefix { $0 != "(" } == entry.name, "\(text) prints as \(strategy)")
                #expect(try StrategySpec(parsing: strategy.description) == strategy, "\(text) prints as \(strategy), which reads back")
                let json = try JSONEncoder().encode([strategy])
                #expect(try JSONDecoder().decode([StrategySpec].self, from: json) == [strategy])
            }
        }
    }

    @Test func everyStrategyRefusesAnArgumentJustOutsideItsRangeAndNamesTheLimit() throws {
        for entry in try Self.entries() {
            let base = entry.placeholders.map { $0.values.accepted[0] }
            for (index, placeholder) in entry.placeholders.enumerated() {
                for (value, names) in placeholder.values.refused {
                    var arguments = base
                    arguments[index] = value
                    let text = entry.text(arguments)
                    let problem = try #require(Self.refusal(text), "\(text) parsed")
                    #expect(problem.contains("'\(text)'"), "the refusal quotes the strategy: \(problem)")
                    #expect(problem.contains(names), "the refusal of \(text) names \(names): \(problem)")
                }
            }
            if entry.placeholders.isEmpty {
                #expect(Self.refusal("\(entry.name)(1)") == "'\(entry.name)' takes no argument; write \(entry.name)")
            } else {
                let short = entry.text(Array(entry.placeholders.dropLast().map { $0.values.accepted[0] }))
                if let problem = Self.refusal(short) {
                    #expect(problem.contains("needs") && problem.contains("write e.g. "), "\(short): \(problem)")
                }
            }
        }
        #expect(Self.refusal("turbo")?.hasPrefix("unknown strategy 'turbo'; valid strategies: \(StrategySpec.catalog.map(\.syntax).joined(separator: ", "))") == true)
    }

    /// The help a user reads in `strain list` states each argument's range or
    /// choices and ends with an example that parses as the strategy it describes.
    @Test func everyStrategysHelpGivesItsArgumentsLimitsAndAnExampleThatParses() throws {
        for entry in try Self.entries() where !entry.placeholders.isEmpty {
            for placeholder in entry.placeholders {
                #expect(entry.summary.contains(placeholder.values.help), "\(entry.name)'s help says '\(placeholder.values.help)': \(entry.summary)")
            }
            let example = try #require(entry.summary.components(separatedBy: "e.g. ").dropFirst().last, "\(entry.name)'s help ends with an example: \(entry.summary)")
            let strategy = try StrategySpec(parsing: example)
            #expect(strategy.description == example, "the example is written as the strategy prints")
            #expect(example.hasPrefix(entry.name + "("), "\(entry.name)'s example is of \(entry.name): \(example)")
        }
    }

    /// `thread-pool(8` in a `[a, b]` list: the hint quotes the strategy's own example,
    /// for every strategy that takes arguments.
    @Test func anUnclosedParenthesisIsAnsweredWithTheStrategysOwnExample() throws {
        for entry in try Self.entries() where !entry.placeholders.isEmpty {
            let example = try #require(entry.summary.components(separatedBy: "e.g. ").dropFirst().last)
            let text = "\(entry.name)(\(entry.placeholders[0].values.accepted[0])"
            let problem = try #require(Self.refusal(text), "\(text) parsed")
            #expect(problem.hasPrefix("'\(text)' opens a parenthesis it does not close; "), "\(problem)")
            if entry.placeholders.count > 1 {
                #expect(problem.hasSuffix("in a [a, b] list a comma ends the item, so quote this strategy: \"\(example)\""), "\(problem)")
            } else {
                #expect(problem.hasSuffix("write e.g. \(example)"), "\(problem)")
            }
        }
    }
}

/// Each form of `StrategySpec.Form.all` decides where its threads come from; the
/// properties the runner reads follow from that and from its arguments.
@Suite struct StrategyFormTests {
    @Test func everyFormsPoolDecidesItsOwnThreadsItsStackAndItsDispatchVerdict() throws {
        #expect(StrategySpec.catalog.map(\.syntax) == StrategySpec.Form.all.map(\.syntax))
        for form in StrategySpec.Form.all {
            let strategy = form.make(form.example)
            #expect(strategy.formAndValues.form.name == form.name, "\(form.name) makes a case that maps back to its own form")
            #expect(strategy.description == form.exampleText)
            #expect(strategy.usesDispatchPool == (form.pool == .dispatch), "\(form.name)")
            guard form.pool == .ownThreads else {
                #expect(strategy.ownThreads == nil, "\(form.name)")
                #expect(strategy.withStack(1 << 20) == nil, "\(form.name)")
                continue
            }
            let threads = try #require(strategy.ownThreads, "\(form.name)")
            #expect(threads.stackBytes == form.example.stackBytes, "\(form.name)")
            #expect(threads.count == (form.arguments.contains(.threadCount) ? form.example.threadCount : 1), "\(form.name)")
            let larger = try #require(strategy.withStack(threads.stackBytes * 2), "\(form.name)")
            #expect(larger.ownThreads?.stackBytes == threads.stackBytes * 2, "\(form.name)")
            #expect(larger.ownThreads?.count == threads.count, "\(form.name): only the stack changes")
            #expect(larger.formAndValues.form.name == form.name)
        }
    }
}
