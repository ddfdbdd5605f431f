import Foundation
import Glibc
import StrainKit

/// Reads what a run records of the machine it ran on.
public enum EnvironmentProbe {
    public static func current(workingDirectory: String = FileManager.default.currentDirectoryPath) -> EnvironmentRecord {
        var names = utsname()
        uname(&names)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return EnvironmentRecord(
            host: field(names.nodename),
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: Int(ProcessInfo.processInfo.physicalMemory),
            kernel: "\(field(names.sysname)) \(field(names.release))",
            architecture: field(names.machine),
            swiftVersion: swiftVersion,
            rlimits: [
                "stack": limit(Int32(RLIMIT_STACK.rawValue)), "nofile": limit(Int32(RLIMIT_NOFILE.rawValue)),
                "nproc": limit(Int32(__RLIMIT_NPROC.rawValue)), "as": limit(Int32(RLIMIT_AS.rawValue)),
            ],
            gitCommit: gitCommit(in: workingDirectory)
        )
    }

    /// The compiler that built this binary.
    static var swiftVersion: String {
        #if compiler(>=6.4)
        "6.4 or later"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #elseif compiler(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }

    static func limit(_ resource: Int32) -> Int {
        var value = rlimit()
        getrlimit(__rlimit_resource_t(resource), &value)
        return value.rlim_cur == rlim_t.max ? -1 : Int(value.rlim_cur)
    }

    /// HEAD of the repository holding `directory`, read from `.git` without running git.
    static func gitCommit(in directory: String) -> String? {
        var url = URL(fileURLWithPath: directory)
        for _ in 0..<32 {
            let git = url.appendingPathComponent(".git")
            if let head = try? String(contentsOf: git.appendingPathComponent("HEAD"), encoding: .utf8) {
                let trimmed = head.trimmingCharacters(in: .whitespacesAndNewlines)
                guard trimmed.hasPrefix("ref: ") else { return trimmed }
                let ref = String(trimmed.dropFirst(5))
                if let commit = try? String(contentsOf: git.appendingPathComponent(ref), encoding: .utf8) {
                    return commit.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                let packed = (try? String(contentsOf: git.appendingPathComponent("packed-refs"), encoding: .utf8)) ?? ""
                return packed.split(separator: "\n").first { $0.hasSuffix(" " + ref) }.map { String($0.prefix(40)) }
            }
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { break }
            url = parent
        }
        return nil
    }
}
