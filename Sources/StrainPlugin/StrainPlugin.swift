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
        // The plugin's own options come before `--`: after it the words are the program's
        // (`swift package strain exec -- ./server --configuration debug`).
        let productName = Self.take("--product", from: &arguments)
        // Timings want a release build; `--configuration debug` reuses a debug one.
        let configuration: PackageManager.BuildConfiguration = Self.take("--configuration", from: &arguments) == "debug" ? .debug : .release
        let product = try productName ?? Self.strainProduct(in: context.package)
        // Through SwiftPM's message channel, as the build request that follows is: so the
        // line comes before the build's own output (on standard error it came after it,
        // "Build complete!" first, in a CI log). Standard output stays strain's (`list --json | jq`).
        Diagnostics.progress("Building \(product) (\(configuration == .release ? "release" : "debug")); the package manager's progress follows")
        let result = try packageManager.build(.product(product), parameters: .init(configuration: configuration, logging: .concise, echoLogs: true))
        guard result.succeeded, let artifact = result.builtArtifacts.first(where: { $0.kind == .executable }) else {
            throw PluginFailure("could not build \(product); the build's log is above")
        }

        let process = Process()
        process.executableURL = artifact.url
        process.arguments = arguments
        process.currentDirectoryURL = context.package.directoryURL
        // strain's standard error is kept and given back with the plugin's own message,
        // in one diagnostic: SwiftPM passes a plugin's output and its diagnostics on by
        // different paths, so strain's error printed live came after the "exited 2" line.
        // `exec`'s standard error is its program's, and stays live.
        let live = arguments.first == "exec"
        let errors = Pipe()
        if !live { process.standardError = errors }
        try process.run()
        let said = live ? Data() : errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let message = String(decoding: said, as: UTF8.self)
        if process.terminationReason == .uncaughtSignal {
            throw PluginFailure(Self.leading(message) + "\(product) was killed by signal \(process.terminationStatus)")
        }
        if process.terminationStatus != 0 {
            throw PluginFailure(Self.leading(message)
                + "\(product) exited \(process.terminationStatus) (SwiftPM reports every failing plugin as 1: run \(artifact.url.path) directly for its exit codes)")
        }
        // A run that passed may still have warned.
        if !message.isEmpty { FileHandle.standardError.write(said) }
    }

    /// Removes `name VALUE` from the arguments before `--` and returns VALUE.
    static func take(_ name: String, from arguments: inout [String]) -> String? {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        guard let flag = arguments[..<end].firstIndex(of: name), flag + 1 < end else { return nil }
        let value = arguments[flag + 1]
        arguments.removeSubrange(flag...(flag + 1))
        return value
    }

    /// strain's own standard error, put before the plugin's line: SwiftPM writes
    /// `error: ` before a diagnostic, so strain's own first `error: ` is not repeated,
    /// nor a suite mistake's `FILE: error: ` (`error: nope.yaml: error: no such file`).
    static func leading(_ message: String) -> String {
        var text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return "" }
        if text.hasPrefix("error: ") { text.removeFirst("error: ".count) }
        let firstLine = text.prefix { $0 != "\n" }
        if let label = firstLine.range(of: ": error: ") { text.replaceSubrange(label, with: ": ") }
        return text + "\n"
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
