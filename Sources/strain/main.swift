import StrainCLI
import StrainScenarios

StrainCommand.main(catalog: .builtIn)
