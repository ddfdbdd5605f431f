import Foundation
import Glibc
import StrainKit
import StrainSymbols

/// Reads what a run records of the machine it ran on.
package enum EnvironmentProbe {
    package static func current(workingDirectory: String = FileManager.default.currentDirectoryPath) -> EnvironmentRecord {
        var names = utsname()
        uname(&names)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        var record = EnvironmentRecord(
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
        record.cpuModel = cpuModel
        record.cgroupCPULimit = cgroupCPULimit
        // A sanitized build's timings are another machine's: the gate compares them with a plain build's only across a fingerprint mismatch.
        record.buildConfiguration = buildConfiguration + (SanitizedTrials.threadSanitizer ? "+thread-sanitizer" : "")
        record.loadAverageStart = loadAverage
        record.build = build
        record.allocator = TrialAllocator.library
        return record
    }

    /// This executable: its path, and its build ID or, lacking one, a hash of its bytes.
    package static var build: BuildIdentity {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        if let buildID = ELFBuildID.of(path: path) { return BuildIdentity(executablePath: path, buildID: buildID, contentHash: nil) }
        let hash = (try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)).map { data in
            data.withUnsafeBytes { String(StableHash.fnv1a(bytes: $0), radix: 16) }
        }
        return BuildIdentity(executablePath: path, buildID: nil, contentHash: hash.map { String(repeating: "0", count: 16 - $0.count) + $0 })
    }

    /// `debug` or `release`: how this binary was built.
    static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    /// The first CPU's model name from `/proc/cpuinfo`.
    static var cpuModel: String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// CPUs the cgroup (v2 `cpu.max`) allows this process; nil when unlimited or unknown.
    static var cgroupCPULimit: Double? {
        guard let text = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) else { return nil }
        let parts = text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), period > 0 else { return nil }
        return quota / period
    }

    /// The 1-minute load average.
    package static var loadAverage: Double? {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) >= 1 ? loads[0] : nil
    }

    /// The machine's CPU time counters (`/proc/stat`'s `cpu` line), in ticks.
    package struct CPUTimes: Sendable {
        package var total: Double
        package var steal: Double

        package static func now() -> CPUTimes? {
            guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
            let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            guard fields.count >= 8 else { return nil }
            // user nice system idle iowait irq softirq steal [guest guest_nice, already in user]
            return CPUTimes(total: fields.prefix(8).reduce(0, +), steal: fields[7])
        }

        /// Share of the ticks since `start` that the hypervisor stole.
        package func stealFraction(since start: CPUTimes) -> Double? {
            let total = self.total - start.total
            return total > 0 ? (steal - start.steal) / total : nil
        }
    }

    /// The compiler that built this binary, to its patch release (`6.3.1`: `compiler(>=6.3)`
    /// alone said `6.3` for 6.3.1).
    static var swiftVersion: String {
        #if compiler(>=6.4)
        "6.4 or later"
        #elseif compiler(>=6.3.5)
        "6.3.5 or later"
        #elseif compiler(>=6.3.4)
        "6.3.4"
        #elseif compiler(>=6.3.3)
        "6.3.3"
        #elseif compiler(>=6.3.2)
        "6.3.2"
        #elseif compiler(>=6.3.1)
        "6.3.1"
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
            var git = url.appendingPathComponent(".git")
            // A worktree's .git is a file naming its own git directory.
            if let pointer = try? String(contentsOf: git, encoding: .utf8), pointer.hasPrefix("gitdir: ") {
                git = URL(fileURLWithPath: pointer.dropFirst(8).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if let head = try? String(contentsOf: git.appendingPathComponent("HEAD"), encoding: .utf8) {
                let trimmed = head.trimmingCharacters(in: .whitespacesAndNewlines)
                guard trimmed.hasPrefix("ref: ") else { return trimmed }
                let ref = String(trimmed.dropFirst(5))
                // A worktree keeps its refs in the common git directory.
                let common = (try? String(contentsOf: git.appendingPathComponent("commondir"), encoding: .utf8))
                    .map { URL(fileURLWithPath: $0.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: git.appendingPathComponent("x")).standardizedFileURL } ?? git
                if let commit = try? String(contentsOf: common.appendingPathComponent(ref), encoding: .utf8) {
                    return commit.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                let packed = (try? String(contentsOf: common.appendingPathComponent("packed-refs"), encoding: .utf8)) ?? ""
                return packed.split(separator: "\n").first { $0.hasSuffix(" " + ref) }.map { String($0.prefix(40)) }
            }
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { break }
            url = parent
        }
        return nil
    }
}
