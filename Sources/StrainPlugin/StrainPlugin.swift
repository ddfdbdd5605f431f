import Foundation
import PackagePlugin

/// `swift package strain run|gate|compare|report|baseline|merge|list …` in any
/// package that depends on Strain.
///
/// It runs the package's own `strain`: the executable product that links StrainCLI
/// (whatever it is named), or the one named with `--product NAME` when the package
/// has several. It builds it in release through the package manager, with the
/// build's progress shown (`--configuration debug` for a debug build), then runs it
/// in the package's folder.
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
        let product = try productName ?? Self.strainProduct(in: context.package)
        // On standard error: standard output is strain's own (`list --json | jq`).
        FileHandle.standardError.write(Data("Building \(product) (\(configuration == .release ? "release" : "debug")); the package manager's progress follows\n".utf8))
        let result = try packageManager.build(.product(product), parameters: .init(configuration: configuration, logging: .concise, echoLogs: true))
        guard result.succeeded, let artifact = result.builtArtifacts.first(where: { $0.kind == .executable }) else {
            throw PluginFailure("could not build \(product); the build's log is above")
        }

        let process = Process()
        process.executableURL = artifact.url
        process.arguments = arguments
        process.currentDirectoryURL = context.package.directoryURL
        try process.run()
        process.waitUntilExit()
        // strain has printed its own message; the status is passed on as SwiftPM allows.
        if process.terminationReason == .uncaughtSignal {
            throw PluginFailure("\(product) was killed by signal \(process.terminationStatus)")
        }
        if process.terminationStatus != 0 {
            throw PluginFailure("\(product) exited \(process.terminationStatus) (SwiftPM reports every failing plugin as 1: run \(artifact.url.path) directly for its exit codes)")
        }
    }

    /// The package's executable product that links StrainCLI: its own `strain`,
    /// whatever it is named.
    static func strainProduct(in package: Package) throws(PluginFailure) -> String {
        let candidates = package.products.compactMap { $0 as? ExecutableProduct }.filter { product in
            product.targets.contains { target in target.name == "StrainCLI" || target.recursiveTargetDependencies.contains { $0.name == "StrainCLI" } }
        }.map(\.name).sorted()
        switch candidates.count {
        case 1:
            return candidates[0]
        case 0:
            throw PluginFailure("""
                \(package.displayName) has no executable product that links StrainCLI: add one that calls \
                StrainCommand.main(catalog:) with your scenarios (see StrainKit's "Your own scenarios"), \
                or name one with --product NAME
                """)
        default:
            throw PluginFailure("\(package.displayName) has \(candidates.count) executable products that link StrainCLI (\(candidates.joined(separator: ", "))): name one with --product NAME")
        }
    }
}

/// A failure SwiftPM prints as the plugin's error, as it is.
struct PluginFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
