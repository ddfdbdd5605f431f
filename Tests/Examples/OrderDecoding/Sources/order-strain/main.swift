import OrderScenarios
import StrainCLI
import StrainKit
import StrainScenarios

// The team's `strain`: its own scenarios beside Strain's built-ins.
StrainCommand.main(catalog: ScenarioCatalog([DecodeOrdersScenario.self, OrderCacheScenario.self]) + .builtIn)
