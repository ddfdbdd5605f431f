import ArgumentParser
import StrainKit

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the scenarios with their parameters, the strategies, the profiles and the outcomes."
    )

    func run() {
        let catalog = activeCatalog.withLock { $0 }
        print("Scenarios:")
        for scenario in catalog.scenarios {
            print("  \(scenario.name)  \(scenario.summary)")
            for parameter in scenario.parameterSpecs {
                print("      \(parameter.name): \(parameter.help); \(parameter.validValues) (default \(parameter.defaultValue))")
            }
        }
        print("\nStrategies:")
        for (syntax, summary) in StrategySpec.catalog { print("  \(syntax)  \(summary)") }
        print("\nProfiles:")
        for profile in Profile.allCases { print("  \(profile.rawValue)  \(profile.summary)") }
        print("\nOutcomes: \(TrialOutcome.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
    }
}
