import Foundation
import StrainRecords
import Testing

/// An allocator the environment preloads (`LD_PRELOAD=… strain run`) runs inside the
/// trials, counted: Strain's malloc family forwards to the next definition in lookup
/// order (CStrainProbe/strain_alloc.c), in the runner, a trial server and its copies alike.
@Suite(.serialized, .timeLimit(.minutes(10))) struct PreloadedAllocatorTests {
    static let compilerFound: Bool = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/cc") || FileManager.default.isExecutableFile(atPath: "\($0)/clang") }
    }()
    static let jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"

    /// Builds Fixtures/programs/marked_alloc.c as a shared library in `folder` (`partial`: malloc, calloc, realloc and free only).
    static func markedAllocator(in folder: String, partial: Bool = false) async throws -> String {
        let library = folder + (partial ? "/libpartial.so" : "/libmarked.so")
        try await TestPrograms.compile([TestPrograms.compiler, "-shared", "-fPIC", "-O2"] + (partial ? ["-DPARTIAL"] : [])
            + ["-o", library, TestPrograms.sources + "/marked_alloc.c"])
        return library
    }

    /// Runs AllocationCountTests' suite (a noop, 200 levels of JSON decoded on two strategies) twice each.
    static func run(_ folder: String, _ name: String, _ extra: [String] = [], environment: [String: String] = [:]) async throws
        -> (StrainBinary.Result, RunRecord?) {
        try AllocationCountTests.suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let out = folder + "/" + name
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "2", "--out", out, "--format", "json"] + extra,
                                                environment: environment)
        return (result, try? RunRecordFile.read(from: out + "/run.json"))
    }

    /// Allocations by "scenario strategy".
    static func allocations(_ record: RunRecord?) -> [String: [Int]] {
        Dictionary(grouping: record?.trials ?? []) { "\($0.scenario) \($0.strategy)" }.mapValues { $0.compactMap(\.metrics.allocations) }
    }

    /// The same rows count the same with and without the preload (within the larger of 16 and 2 %).
    static func expectSameCounts(_ plain: RunRecord?, _ preloaded: RunRecord?, _ label: String) {
        let a = allocations(plain), b = allocations(preloaded)
        #expect(a.keys.sorted() == b.keys.sorted() && a.count == 3, "\(label): \(a.keys.sorted()) against \(b.keys.sorted())")
        for (row, counts) in a {
            let both = counts + (b[row] ?? [])
            #expect(counts.count == 2 && b[row]?.count == 2, "\(label) \(row): \(counts) against \(b[row] ?? [])")
            // Within the larger of 16 and 2 %: the marked allocator hands out exactly what is
            // asked (its malloc_usable_size has no slack), so Swift's arrays, which grow into
            // the slack glibc gives, grow a few more times (gcd-global: 1,065–1,069 plain,
            // 1,080–1,082 preloaded, once): its own behaviour, counted, not a lost count.
            if let low = both.min(), let high = both.max() {
                #expect(high - low <= max(16, low / 50), "\(label) \(row): plain \(counts), preloaded \(b[row] ?? [])")
            }
        }
        for (row, counts) in b where row.hasPrefix("nested-json") { #expect(counts.allSatisfy { $0 >= 200 }, "\(label) \(row): \(counts)") }
    }

    /// The marked allocator's per-process counts: the program's name and its calls, one a process.
    static func calls(in folder: String) throws -> [(program: String, calls: UInt64)] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("calls-") }.map { name in
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            let program = String(decoding: data.prefix(256).prefix { $0 != 0 }, as: UTF8.self)
            let calls = data.count >= 264 ? data[256..<264].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } : 0
            return (program, calls)
        }
    }

    @Test(.enabled(if: compilerFound, "no cc or clang on PATH: a C compiler builds the preloaded allocator"))
    func anAllocatorPreloadedIntoASuiteRunsInsideEveryTrialServerAndCopyAndTheirCountsStayTheSame() async throws {
        let folder = try AllocationCountTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let library = try await Self.markedAllocator(in: folder)
        let (plain, plainRecord) = try await Self.run(folder, "plain")
        #expect(plain.status == 0, "\(plain.stdout)\n\(plain.stderr)")
        #expect(plainRecord?.environment.allocator?.hasSuffix("/libc.so.6") == true, "\(plainRecord?.environment.allocator ?? "none")")
        for isolation in [[], ["--isolation", "spawn"]] {
            let calls = folder + "/calls" + isolation.joined()
            try FileManager.default.createDirectory(atPath: calls, withIntermediateDirectories: true)
            let (preloaded, record) = try await Self.run(folder, "preloaded" + isolation.joined(), isolation,
                                                         environment: ["LD_PRELOAD": library, "MARKED_ALLOC_DIR": calls])
            // A block passed between this allocator and glibc's aborts its process: every trial completed.
            #expect(preloaded.status == 0, "\(isolation): \(preloaded.stdout)\n\(preloaded.stderr)")
            #expect(record?.trials.allSatisfy { $0.outcome.kind == .completed } == true, "\(record?.trials.map(\.outcome.kind) ?? [])")
            #expect(record?.environment.allocator == library, "\(record?.environment.allocator ?? "none")")
            Self.expectSameCounts(plainRecord, record, "\(isolation)")
            // Each trial is a process of its own (a copy of the trial server, or spawned), and each
            // strain process called the preloaded malloc: the runner, the server, every trial.
            let processes = try Self.calls(in: calls).filter { $0.program == "strain" }
            let trials = record?.trials.count ?? 0
            #expect(trials == 6 && processes.count >= trials + 1, "\(isolation): \(processes.count) strain processes called it, \(trials) trials")
            // The trials' work alone: at least what they counted.
            let counted = record?.trials.compactMap(\.metrics.allocations).reduce(0, +) ?? 0
            #expect(processes.map(\.calls).reduce(0, +) >= UInt64(counted), "\(processes), counted \(counted)")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: jemalloc),
                   "Debian's libjemalloc2 is not installed (apt-get install libjemalloc2): the preload is checked with the marked allocator only"))
    func jemallocPreloadedIntoASuiteIsTheAllocatorItsTrialsCountThrough() async throws {
        let folder = try AllocationCountTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (plain, plainRecord) = try await Self.run(folder, "plain")
        #expect(plain.status == 0, "\(plain.stdout)\n\(plain.stderr)")
        let (preloaded, record) = try await Self.run(folder, "jemalloc", environment: ["LD_PRELOAD": Self.jemalloc])
        #expect(preloaded.status == 0, "\(preloaded.stdout)\n\(preloaded.stderr)")
        #expect(record?.environment.allocator == Self.jemalloc, "\(record?.environment.allocator ?? "none")")
        Self.expectSameCounts(plainRecord, record, "jemalloc")
    }

    @Test(.enabled(if: compilerFound, "no cc or clang on PATH: a C compiler builds the preloaded allocator"))
    func aPreloadedAllocatorWithoutTheWholeMallocFamilyIsRefusedBeforeAnyTrialNamingTheLibrary() async throws {
        let folder = try AllocationCountTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let library = try await Self.markedAllocator(in: folder, partial: true)
        let (refused, record) = try await Self.run(folder, "partial", environment: ["LD_PRELOAD": library])
        #expect(refused.status == 4, "\(refused.status): \(refused.stdout)\n\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("error: LD_PRELOAD=\(library) chose an allocator trials cannot count through: the next malloc is \(library), "
                                         + "which does not define memalign, posix_memalign, aligned_alloc"), "\(refused.stderr)")
        #expect(refused.stderr.contains("would forward to glibc's allocator instead"), "\(refused.stderr)")
        #expect(record == nil && !FileManager.default.fileExists(atPath: folder + "/partial"), "nothing ran, no folder was written")
    }

    /// Trials refuse a partial family (above); `strain exec` keeps it: the program's mallocs
    /// go to the library it preloaded, as they do without Strain (they went to glibc's).
    @Test(.enabled(if: compilerFound, "no cc or clang on PATH: a C compiler builds the preloaded allocator"))
    func strainExecKeepsAPartialPreloadedAllocatorWhereTheProgramAloneCallsIt() async throws {
        let folder = try AllocationCountTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let library = try await Self.markedAllocator(in: folder, partial: true)
        var counts: [String: UInt64] = [:]
        for run in ["alone", "exec"] {
            let calls = folder + "/calls-" + run
            try FileManager.default.createDirectory(atPath: calls, withIntermediateDirectories: true)
            let environment = ["LD_PRELOAD": library, "MARKED_ALLOC_DIR": calls]
            let arguments = ["-c", "/bin/ls / >/dev/null; echo done"]
            let result = run == "alone"
                ? try await ProgramRun.run("/bin/sh", arguments, environment: environment)
                : try await ProgramRun.run(StrainBinary.path, ["exec", "--out", folder + "/out", "--", "/bin/sh"] + arguments, environment: environment)
            #expect(result.termination == .exited(0), "\(run): \(result.stderr)")
            #expect(result.stdout == "done\n", "\(run): \(result.stdout)")
            counts[run] = try Self.calls(in: calls).filter { $0.program == "ls" }.map(\.calls).reduce(0, +)
        }
        let alone = counts["alone"] ?? 0, probed = counts["exec"] ?? 0
        #expect(alone > 0, "ls called the preloaded malloc alone: \(counts)")
        // The probe's own few allocations in ls (its constructor's) go there too.
        #expect(probed >= alone, "under strain exec ls called it \(probed) times, alone \(alone)")
    }
}
