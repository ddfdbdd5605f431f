import PreviousScenarios
import StrainCLI
import StrainKit

StrainCommand.main(catalog: ScenarioCatalog([ChecksumScenario.self, DocumentScenario.self]))
