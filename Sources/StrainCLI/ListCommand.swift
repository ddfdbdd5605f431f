import ArgumentParser
import Foundation
import StrainKit
import StrainReports
import StrainText

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the scenarios with their parameters, the strategies, the profiles and the outcomes.",
        discussion: "--json prints the same as one JSON document (CatalogListing, its `version` first) for tools."
            + "\n" + ExitCodeContract.section(for: "list")
    )

    @Flag(help: "Print the catalog as JSON for tools.")
    var json = false

    func run() throws {
        let catalog = activeCatalog.withLock { $0 }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(CatalogListing(catalog)), as: UTF8.self))
            return
        }
        // Laid out as `strain explain` lays out one scenario, each line fitted to the
        // window (80 columns in a pipe) between words.
        let style = TerminalStyle(color: false, width: RunCommand.terminalColumns() - 1)
        var lines = ["Scenarios:"]
        let named = Self.column(catalog.scenarios.map { ($0.name, $0.summary) }, style: style)
        for (scenario, entry) in zip(catalog.scenarios, named) {
            lines += entry + ExplainCommand.parameterLines(scenario.parameterSpecs, indent: "      ", style: style)
        }
        lines += ["", "Strategies:"] + Self.column(StrategySpec.catalog.map { ($0.syntax, $0.summary) }, style: style).joined()
        lines += ["", "Profiles:"] + Self.column(Profile.allCases.map { ($0.rawValue, $0.summary) }, style: style).joined()
        lines += ["", "Outcomes: \(TrialOutcome.Kind.allCases.map(\.rawValue).joined(separator: ", "))"]
        print(lines.flatMap { style.fit($0) }.joined(separator: "\n"))
        print("\n'strain explain NAME' says more about one scenario.")
    }
}

extension ListCommand {
    /// Names in a column of their own and each summary beside its name, wrapped in
    /// its column, or under the name, indented, when the names leave it too little room.
    static func column(_ entries: [(name: String, summary: String)], style: TerminalStyle) -> [[String]] {
        let width = entries.map(\.name.count).max() ?? 0
        guard width <= 24 else { return entries.map { ["  \($0.name)"] + style.fit("      \($0.summary)") } }
        return entries.map { entry in
            style.fit("  \(entry.name)\(String(repeating: " ", count: width - entry.name.count))  \(entry.summary)", hanging: width + 4)
        }
    }
}

/// `strain list --json`: the catalog as tools read it. `version` changes when a
/// field changes meaning or goes away; new fields may appear without it.
struct CatalogListing: Encodable {
    struct ParameterEntry: Encodable {
        var name: String
        /// `integer`, `byte size` or `choice`.
        var type: String
        var help: String
        /// The default as a suite writes it.
        var `default`: String
        /// The choices, for a choice.
        var choices: [String]?
        /// The smallest and largest value (bytes for a byte size).
        var minimum: Int?
        var maximum: Int?

        init(_ spec: ParameterSpec) {
            name = spec.name
            type = spec.typeName
            help = spec.help
            `default` = spec.defaultValue
            switch spec.kind {
            case .choice(let names): choices = names
            case .integer(let range), .byteSize(let range): (minimum, maximum) = (range.lowerBound, range.upperBound)
            }
        }
    }

    struct OutcomeEntry: Encodable {
        var outcome: String
        var because: String
    }

    struct ScenarioEntry: Encodable {
        var name: String
        var summary: String
        var parameters: [ParameterEntry]
        var metrics: [MetricDescriptor]
        var typicalOutcomes: [OutcomeEntry]
    }

    struct NamedEntry: Encodable {
        var name: String
        var summary: String
    }

    var version = 1
    var scenarios: [ScenarioEntry]
    var strategies: [NamedEntry]
    var profiles: [NamedEntry]
    var outcomes: [String]

    init(_ catalog: ScenarioCatalog) {
        scenarios = catalog.scenarios.map { scenario in
            ScenarioEntry(name: scenario.name, summary: scenario.summary, parameters: scenario.parameterSpecs.map(ParameterEntry.init),
                          metrics: scenario.metricDescriptors,
                          typicalOutcomes: scenario.typicalOutcomes.map { OutcomeEntry(outcome: $0.outcome.rawValue, because: $0.because) })
        }
        strategies = StrategySpec.catalog.map { NamedEntry(name: $0.syntax, summary: $0.summary) }
        profiles = Profile.allCases.map { NamedEntry(name: $0.rawValue, summary: $0.summary) }
        outcomes = TrialOutcome.Kind.allCases.map(\.rawValue)
    }
}
