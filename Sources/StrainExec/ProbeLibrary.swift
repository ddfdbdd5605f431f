import Foundation
import Glibc
import StrainRunner
import StrainWire

/// libStrainProbe.so, the probe `strain exec` preloads into a program: the
/// `StrainProbe` product, which SwiftPM builds next to the `strain` executable.
package enum ProbeLibrary {
    package static let fileName = "libStrainProbe.so"
    /// Names the library elsewhere (an installed strain whose library lives apart).
    package static let environmentOverride = ProbeEnvironment.library

    /// The library's absolute path: `$STRAIN_PROBE_LIBRARY`, else next to
    /// `executable`, else in `../lib` from it.
    package static func locate(executable: String = currentExecutablePath(),
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws(ExecError) -> String {
        var candidates: [String]
        if let named = environment[environmentOverride], !named.isEmpty {
            candidates = [named]
        } else {
            let folder = (executable as NSString).deletingLastPathComponent
            candidates = [(folder as NSString).appendingPathComponent(fileName), (folder as NSString).appendingPathComponent("../lib/" + fileName)]
        }
        candidates = candidates.map { path in
            let absolute = path.hasPrefix("/") ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
            return (absolute as NSString).standardizingPath
        }
        guard let found = candidates.first(where: { access($0, R_OK) == 0 }) else {
            let how = environment[environmentOverride].map { _ in "\(environmentOverride) names it, but it cannot be read" }
                ?? "it is not next to strain; build it with `swift build --product StrainProbe` (a plain `swift build` builds it too), or name it with \(environmentOverride)"
            throw ExecError(.setup, "no probe library at \(candidates[0]): \(how)")
        }
        // LD_PRELOAD splits its list at spaces and colons.
        guard !found.contains(" "), !found.contains(":") else {
            throw ExecError(.setup, "the probe library's path \(found) holds a space or a colon, which LD_PRELOAD cannot carry; move strain (or the library, with \(environmentOverride)) to a plainer path")
        }
        return found
    }
}
