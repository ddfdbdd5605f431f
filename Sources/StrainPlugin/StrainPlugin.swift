import Foundation
import PackagePlugin

/// `swift package strain run|gate|compare|report|baseline|merge|list …` in any
/// package that depends on Strain.
///
/// It runs the package's own `strain` executable product when it has one (a
/// `strain` built from StrainCLI with the package's scenarios), or one named with
/// `--product NAME`, built in release (`--configuration debug` for a debug build);
/// otherwise Strain's own `strain`.
///
/// - Important: SwiftPM turns every non-zero exit of a plugin into 1. CI that needs
///   the gate's distinct exit codes (2 input error, 3 incomplete data) calls the
///   `strain` executable directly, or reads the `exitCode` in `gate.json`.
@main
struct StrainPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var arguments = arguments
        var productName: String?
        if let flag = arguments.firstIndex(of: "--product"), flag + 1 < arguments.count {
            productName = arguments[flag + 1]
            arguments.removeSubrange(flag...(flag + 1))
        }
        // Timings want a release build; `--configuration debug` reuses a debug one.
        var configuration = PackageManager.BuildConfiguration.release
        if let flag = arguments.firstIndex(of: "--configuration"), flag + 1 < arguments.count {
            configuration = arguments[flag + 1] == "debug" ? .debug : .release
            arguments.removeSubrange(flag...(flag + 1))
        }
        let ownProduct = productName ?? context.package.products.first { $0.name == "strain" && $0 is ExecutableProduct }?.name
        let executable: URL
        if let ownProduct {
            let result = try packageManager.build(.product(ownProduct), parameters: .init(configuration: configuration, logging: .concise))
            guard result.succeeded, let artifact = result.builtArtifacts.first(where: { $0.kind == .executable }) else {
                Diagnostics.error("could not build \(ownProduct):\n\(result.logText)")
                throw PluginFailure.exit(1)
            }
            executable = artifact.url
        } else {
            executable = try context.tool(named: "strain").url
        }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = context.package.directoryURL
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Diagnostics.error("strain \(arguments.first ?? "") exited \(process.terminationStatus) (a plugin can only report failure as 1; run the strain executable for its exit codes)")
            throw PluginFailure.exit(process.terminationStatus)
        }
    }
}

enum PluginFailure: Error {
    case exit(Int32)
}
