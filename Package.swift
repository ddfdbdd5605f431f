// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Strain",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strain", targets: ["strain"]),
        // The scenario SDK: what a scenario author depends on.
        .library(name: "StrainKit", targets: ["StrainKit"]),
        // Optional building blocks for concurrent scenarios: start gates, countdowns,
        // the worker loop with latency sampling, the guards, flood-then-probe.
        .library(name: "StrainHelpers", targets: ["StrainHelpers"]),
        // The `strain` command line as a library: `StrainCommand.main(catalog:)`.
        .library(name: "StrainCLI", targets: ["StrainCLI"]),
        // The built-in scenarios (`ScenarioCatalog.builtIn`), for a user's own `strain`
        // beside its own catalog; the only product that links OpenCombine.
        .library(name: "StrainScenarios", targets: ["StrainScenarios"]),
        // Expectations for Swift Testing: a closure run as a trial in an isolated child
        // of the test process (`expectCompletes`, `expectAllocations`, `strainTrial`).
        .library(name: "StrainTesting", targets: ["StrainTesting"]),
        // The probe as a library any program can be started with: `strain exec`
        // preloads libStrainProbe.so, found next to the `strain` executable.
        .library(name: "StrainProbe", type: .dynamic, targets: ["CStrainPreload"]),
        // `swift package strain run|gate|compare|report …` in a package that depends on Strain.
        .plugin(name: "StrainPlugin", targets: ["StrainPlugin"]),
    ],
    traits: [
        // A failing StrainTesting expectation attaches report.html beside run.json; off by
        // default, so a test target does not compile the report renderers unless it asks:
        // `.package(url: …, from: …, traits: ["StrainTestingReports"])`.
        .trait(name: "StrainTestingReports", description: "StrainTesting attaches report.html to a failing expectation, beside run.json"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // Latency distributions (HdrHistogram), per worker, merged at the end.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // Combine's store(in:) on Linux, for the contention scenario users actually write.
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        // `swift package generate-documentation --target StrainKit|StrainHelpers|StrainCLI`:
        // the DocC catalogs beside the sources (Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // libunwind through a shim: its unw_* names are macros Swift cannot import.
        .systemLibrary(
            name: "CLibunwind",
            pkgConfig: "libunwind",
            providers: [.apt(["libunwind-dev"])]
        ),
        // The async-signal-safe C that runs inside the process under test: crash
        // handler, alternate stacks, stack walks, dumps. libc and libunwind only.
        .target(
            name: "CStrainProbe",
            dependencies: ["CLibunwind"],
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // The probe for any program: a constructor and the pthread_create and
        // sigaction interposers, over CStrainProbe (the `StrainProbe` product).
        .target(
            name: "CStrainPreload",
            dependencies: ["CStrainProbe"],
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [
                .linkedLibrary("dl"),
                // Linked by swiftc, a library gets swiftrt.o and libswiftCore.so, whose
                // runtime would then start in every C program run under `strain exec`.
                // Embedded mode links C objects with neither. Only this target (only
                // in the StrainProbe product) carries the flag, so a package that
                // depends on Strain by version still uses every other product (checked
                // with a tagged clone and StrainKit).
                .unsafeFlags(["-enable-experimental-feature", "Embedded"], .when(platforms: [.linux])),
            ]
        ),
        // C that stays out of the probe and the SDK: the parent's ptrace walks and
        // demangling, stop signals, the trial server's fork and the walk comparison.
        .target(
            name: "CStrainTools",
            dependencies: ["CLibunwind", "CStrainProbe"],
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [
                // __cxa_demangle, for naming C++ frames in traces.
                .linkedLibrary("stdc++"),
                // The parent's ptrace fallback; Debian's libunwind-ptrace.so does not
                // name its own dependencies (libunwind-generic, liblzma).
                .linkedLibrary("unwind-ptrace"),
                .linkedLibrary("unwind-generic"),
                .linkedLibrary("lzma"),
            ]
        ),
        // The C a scenario calls in its own code: faults on purpose and the reference
        // loop. The SDK's C besides the probe: no ptrace, no lzma, no fork code.
        .target(
            name: "CStrainFaults",
            linkerSettings: [
                // std::terminate, for the C++-style abort (libswiftCore needs libstdc++ anyway).
                .linkedLibrary("stdc++"),
            ]
        ),
        // run.json's vocabulary: depends on Foundation only, so the reports and the
        // gate build where libunwind is absent. Its JSON Schema lives beside it.
        .target(name: "StrainRecords", exclude: ["RunRecord.schema.json"]),
        .target(
            name: "StrainKit",
            dependencies: ["StrainRecords", "CStrainProbe", "CStrainFaults", .product(name: "Histogram", package: "hdrhistogram-swift")]
        ),
        // What crosses between the parent and a trial: messages, environment names,
        // descriptor numbers, each with its version. Records only.
        .target(name: "StrainWire", dependencies: ["StrainRecords"]),
        // The suite language: YAML to a typed suite and plan (fuzzed alone).
        .target(
            name: "StrainSuite",
            dependencies: ["StrainRecords", "StrainWire", "StrainKit", .product(name: "Yams", package: "Yams")]
        ),
        // Naming addresses: ELF tables, llvm-symbolizer, demangling, recursion cycles, thread dumps.
        .target(name: "StrainSymbols", dependencies: ["StrainRecords", "StrainWire", "CStrainTools"]),
        // Inside a trial: the `_trial` child's host and watchdog, the trial server's side.
        .target(name: "StrainHost", dependencies: ["StrainRecords", "StrainKit", "StrainWire", "CStrainProbe", "CStrainTools"]),
        // The parent: the trial pipeline (launch, watch, classify, record), run and bisect,
        // the trial server's client, the journal.
        .target(
            name: "StrainRunner",
            dependencies: ["StrainRecords", "StrainKit", "StrainWire", "StrainSuite", "StrainSymbols", "CStrainProbe", "CStrainTools"]
        ),
        // A program Strain did not build (`strain exec`, `strain dump`), through the
        // runner's trial pipeline: the probe's folder, the stall watch, lock waits.
        .target(
            name: "StrainExec",
            dependencies: ["StrainRecords", "StrainKit", "StrainWire", "StrainSymbols", "StrainRunner", "StrainText", "CStrainProbe", "CStrainTools"]
        ),
        // A test's closure as a trial: the re-run test process is the child (the host),
        // the test process the parent (the runner's pipeline). No CLI or gate; the report
        // renderers only with the StrainTestingReports trait.
        .target(
            name: "StrainTesting",
            dependencies: ["StrainRecords", "StrainKit", "StrainWire", "StrainHost", "StrainRunner", "StrainText",
                           .byName(name: "StrainReports", condition: .when(traits: ["StrainTestingReports"]))]
        ),
        // Text laid out for a terminal or markup: tables fitted to a width, lines broken between words, escaping.
        .target(name: "StrainText", dependencies: ["StrainRecords"]),
        .target(name: "StrainReports", dependencies: ["StrainRecords", "StrainText"]),
        // Public API of StrainKit only, like any user's scenarios.
        .target(name: "StrainHelpers", dependencies: ["StrainKit"]),
        .target(
            name: "StrainScenarios",
            dependencies: ["StrainKit", "StrainHelpers", .product(name: "OpenCombine", package: "OpenCombine")]
        ),
        .target(
            name: "StrainCLI",
            dependencies: [
                "StrainRecords", "StrainKit", "StrainSuite", "StrainHost", "StrainRunner", "StrainExec", "StrainReports", "StrainText", "StrainGate",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "strain", dependencies: ["StrainCLI", "StrainScenarios"]),
        .plugin(
            name: "StrainPlugin",
            capability: .command(
                intent: .custom(verb: "strain", description: "Run Strain: suites, reports, baselines, the gate"),
                permissions: [.writeToPackageDirectory(reason: "Strain writes run records and reports under Reports/")]
            ),
            path: "Sources/StrainPlugin"
        ),
        // The gate's statistics: Foundation only, so any module can build on it.
        .target(name: "StrainGate", dependencies: ["StrainRecords", "StrainText"]),
        .testTarget(
            name: "StrainTests",
            dependencies: [
                "StrainRecords", "StrainKit", "StrainHelpers", "StrainWire", "StrainSuite", "StrainSymbols", "StrainHost",
                "StrainRunner", "StrainExec", "StrainReports", "StrainText", "StrainScenarios", "StrainCLI", "StrainTesting",
                // The user workflow's test reads the example's GitHub Actions workflow.
                .product(name: "Yams", package: "Yams"),
            ],
            // A fixed run.json, the golden reports rendered from it and the JUnit schema, read by path.
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "StrainGateTests", dependencies: ["StrainGate", "StrainRecords"]),
    ]
)

// libFuzzer harnesses (Tests/Fuzz), only when asked: `Tests/Fuzz/run` builds them
// with -sanitize=fuzzer in their own build folder.
if Context.environment["STRAIN_FUZZ"] == "1" {
    package.targets += [
        .executableTarget(name: "FuzzSuiteParser", dependencies: ["StrainSuite", "StrainScenarios"], path: "Tests/Fuzz/FuzzSuiteParser"),
        .executableTarget(name: "FuzzRunRecord", dependencies: ["StrainRecords", "StrainReports"], path: "Tests/Fuzz/FuzzRunRecord"),
    ]
}
