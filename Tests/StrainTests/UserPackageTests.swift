import Foundation
import StrainKit
import Synchronization
import Testing

/// User packages the tests build against this checkout, as a team would depend
/// on Strain by path. They share one scratch folder with the gate's fixture, so
/// Strain's own modules compile once for all of them (a package adds seconds).
enum FixturePackage {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let scratch = repository.appendingPathComponent(".build/gate-fixture-build").path
    /// The ThreadSanitizer builds' scratch folder: the testing fixture's race tests and
    /// the sanitized `strain` (built as a product of the fixture's Strain dependency)
    /// share Strain's sanitized modules there.
    static let sanitizedScratch = repository.appendingPathComponent(".build/gate-fixture-tsan").path
    /// One command at a time in each scratch folder (SwiftPM's own lock would make a
    /// second build there wait unbounded, and a product run or copied while another
    /// build relinks it fails with ETXTBSY), and at most two compiles at once, whatever
    /// the folder. One compile at a time left a core idle for most of the test run: a
    /// release build compiles a module at a time (whole-module), and the fixture
    /// packages' tests, the bundle and the sanitized builds queued behind each other for
    /// about 1,000 s of a 1,238 s run (a fresh-clone run on 2026-11-29). Three at once on
    /// 2 cores once starved a 1 MiB parse past 120 s; two is the most the machine gives.
    /// A caller takes its folder first, then a compile: always in that order.
    private static let compiles = AsyncLock(slots: 2)
    private static let folders = Mutex<[String: AsyncLock]>([:])

    private static func folderLock(_ scratch: String) -> AsyncLock {
        folders.withLock { locks in
            if let lock = locks[scratch] { return lock }
            let lock = AsyncLock()
            locks[scratch] = lock
            return lock
        }
    }

    struct BuildError: Error, CustomStringConvertible {
        var output: String
        var description: String { output }
    }

    /// Builds the package at `path` in debug, then runs `body` with its build folder
    /// while still holding the scratch folder: a product there is run or copied before
    /// another package's build in the same folder relinks it (running a binary being
    /// relinked failed with ETXTBSY, "Text file busy", in a CI run).
    static func build<T>(_ path: String, then body: (String) async throws -> T) async throws -> T {
        try await locked {
            // SwiftPM keeps a path dependency's file list in its build plan: plan again, so
            // files added to Strain since the last build are seen (the objects stay cached).
            try? FileManager.default.removeItem(atPath: scratch + "/debug.yaml")
            try? FileManager.default.removeItem(atPath: scratch + "/debug/description.json")
            let (status, output) = try await swift(["build", "--package-path", path, "--scratch-path", scratch])
            guard status == 0 else { throw BuildError(output: output) }
            return try await body(scratch + "/debug")
        }
    }

    /// Runs `body` holding the scratch folder `folder` (the fixtures' shared one by
    /// default): a `swift` command that builds or runs products there.
    static func locked<T>(scratch folder: String = scratch, _ body: () async throws -> T) async throws -> T {
        try await folderLock(folder).withLock { try await body() }
    }

    /// Runs `body`, a compile, in one of the two compile slots. Call it inside
    /// `locked(scratch:)`, never around it; `swift(_:)` takes a slot by itself.
    /// `ahead`: before every compile already waiting. Only the release bundle's build
    /// asks for it: it heads the run's longest chain (about 600 s of release build on a
    /// quiet machine, then the user workflow's 300–500 s on the bundle).
    /// Its child processes go ahead of other tests' for a process slot (`BoundedProcess.goesAhead`).
    static func compiling<T>(ahead: Bool = false, _ body: () async throws -> T) async throws -> T {
        try await compiles.withLock(ahead: ahead) {
            try await BoundedProcess.$goesAhead.withValue(true) { try await body() }
        }
    }

    /// Runs `swift ARGUMENTS`, output and errors together; `build` and `package` (a
    /// plugin that builds) take a compile slot. The first build of a fixture compiles
    /// Strain itself in debug (minutes on a busy 2-core machine): 30 minutes bound a
    /// hang, well inside CI's own limit.
    static func swift(_ arguments: [String], directory: String? = nil) async throws -> (Int32, String) {
        if ["build", "package"].contains(arguments.first) {
            return try await compiling { try await Tool.run(["swift"] + arguments, directory: directory, timeout: 1800) }
        }
        return try await Tool.run(["swift"] + arguments, directory: directory, timeout: 1800)
    }

    /// Runs a built binary with `arguments` from `directory`; past `timeout` seconds
    /// it is killed and the call throws.
    static func run(_ binary: String, _ arguments: [String], directory: String, environment: [String: String] = [:],
                    timeout: Double = 120) async throws -> StrainBinary.Result {
        let ended = try await BoundedProcess.run(binary, arguments, directory: directory, environment: environment, timeout: timeout)
        return StrainBinary.Result(status: ended.status, stdout: ended.stdout, stderr: ended.stderr)
    }

    /// Every Swift file under `path`, leaving out hidden folders and build folders
    /// (`.build`, `.build-*`, `.swiftpm`: a built fixture holds third parties' checkouts).
    static func sources(under path: String) async -> [(path: String, text: String)] {
        let files = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String }.filter { file in
            file.hasSuffix(".swift") && !file.split(separator: "/").dropLast().contains { $0.hasPrefix(".") }
        } ?? []
        return files.compactMap { file in (try? String(contentsOfFile: path + "/" + file, encoding: .utf8)).map { (file, $0) } }
    }
}

/// A user's packages built against the public API: the minimal fixture and the
/// worked example StrainKit's article "Your own scenarios" shows.
@Suite(.serialized, .timeLimit(.minutes(60))) struct UserPackageTests {
    static let minimal = FixturePackage.repository.appendingPathComponent("Tests/MinimalUserPackage").path
    static let example = FixturePackage.repository.appendingPathComponent("Tests/Examples/OrderDecoding").path

    static func folder() throws -> String {
        let folder = TestFolders.root.appendingPathComponent("strain-user-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func userPackagesUseNeitherTestableImportsNorTheCModule() async throws {
        // A machine that built a fixture has third parties' sources under its `.build`
        // (checkouts, with their own `@testable import`s): those are not the user's. One
        // is planted here, in a build folder of this test's own, and must not be read.
        let planted = Self.minimal + "/.build-doc-scan-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: planted + "/checkouts/other/Sources/Other", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: planted) }
        try "@testable import Other\n".write(toFile: planted + "/checkouts/other/Sources/Other/Other.swift", atomically: true, encoding: .utf8)
        for package in [Self.minimal, Self.example] {
            let sources = await FixturePackage.sources(under: package)
            #expect(sources.count >= 2, "\(package): \(sources.map(\.path))")
            for (file, text) in sources {
                #expect(!text.contains("@testable"), "\(file)")
                #expect(!text.contains("import CStrainProbe") && !text.contains("import Histogram"), "\(file)")
            }
        }
    }

    @Test func theBuiltInsAndTheHelpersUseNeitherTheCModuleNorTheHistogramLibrary() async {
        for folder in ["Sources/StrainScenarios", "Sources/StrainHelpers"] {
            for (file, text) in await FixturePackage.sources(under: FixturePackage.repository.appendingPathComponent(folder).path) {
                #expect(!text.contains("import CStrainProbe") && !text.contains("import Histogram") && !text.contains("strain_"), "\(folder)/\(file)")
            }
        }
    }

    /// StrainKit's article that holds the worked example, file by file.
    static let workedExampleArticle = "Sources/StrainKit/StrainKit.docc/YourOwnScenarios.md"

    @Test func theYourOwnScenariosArticleShowsEveryFileOfTheWorkedExampleAsItIs() throws {
        let path = FixturePackage.repository.appendingPathComponent(Self.workedExampleArticle).path
        // The article itself, found where the README's map points: a moved or renamed
        // article fails here rather than passing on an empty text.
        #expect(FileManager.default.fileExists(atPath: path), "\(Self.workedExampleArticle) holds the worked example")
        let article = try String(contentsOfFile: path, encoding: .utf8)
        try #require(article.hasPrefix("# Your own scenarios\n"), "\(Self.workedExampleArticle) starts with its title")
        for file in ["Package.swift", "orders.yaml", "Sources/OrderModel/Order.swift", "Sources/OrderScenarios/DecodeOrdersScenario.swift",
                     "Sources/OrderScenarios/OrderCacheScenario.swift", "Sources/order-strain/main.swift",
                     "Tests/OrderModelTests/OrderEdgeTests.swift"] {
            let text = try String(contentsOfFile: Self.example + "/" + file, encoding: .utf8)
            #expect(article.contains(text.trimmingCharacters(in: .newlines)), "\(Self.workedExampleArticle) shows \(file) as it is")
        }
    }

    @Test func aMinimalUserPackageOnTheSDKAloneRunsItsScenarioAndWritesItsDeclaredMetrics() async throws {
        let out = try Self.folder() + "/run"
        let (image, result) = try await FixturePackage.build(Self.minimal) { folder in
            (try Data(contentsOf: URL(fileURLWithPath: folder + "/minimal-strain")),
             try await FixturePackage.run(folder + "/minimal-strain", ["run", "minimal.yaml", "--out", out, "--format", "json"], directory: Self.minimal))
        }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        #expect(record.trials.count == 12)
        #expect(record.trials.allSatisfy { $0.outcome.kind == .completed }, "\(record.trials.map(\.outcome.description))")
        #expect(record.trials.allSatisfy { $0.metrics.custom["checksum"] != nil && $0.metrics.latency?.count == 20 })
        let declared = try #require(record.customMetrics?.first { $0.name == "bytes per second" })
        #expect(declared.unit == .perSecond && declared.polarity == .higherIsBetter && declared.noise == .timing)
        #expect(Set(record.trials.compactMap { $0.parameters["order"] }) == ["forward", "backward"])
        // Linking StrainKit and StrainCLI brings neither the built-ins nor OpenCombine.
        #expect(image.range(of: Data("OpenCombine".utf8)) == nil && image.range(of: Data("StrainScenarios".utf8)) == nil)
    }

    @Test func aScenarioThatReadsAParameterItDoesNotDeclareIsRefusedBeforeAnyTrialRuns() async throws {
        let folder = try Self.folder()
        try "name: misread\nruns:\n  - scenario: misread\n    strategies: [main]\n".write(toFile: folder + "/misread.yaml", atomically: true, encoding: .utf8)
        let result = try await FixturePackage.build(Self.minimal) { built in
            try await FixturePackage.run(built + "/minimal-strain", ["run", "misread.yaml", "--out", folder + "/run"], directory: folder)
        }
        #expect(result.status == 2, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("misread.yaml:3:15") && result.stderr.contains("scenario 'misread' reads parameter 'sise'"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/run/run.json"), "no trial ran")
    }

    @Test func aCatalogWithTwoScenariosOfOneNameIsRefusedWithExitTwo() async throws {
        let result = try await FixturePackage.build(Self.minimal) { built in
            try await FixturePackage.run(built + "/minimal-strain", ["list"], directory: Self.minimal, environment: ["MINIMAL_DUPLICATE": "1"])
        }
        #expect(result.status == 2)
        #expect(result.stderr.contains("two scenarios are named 'checksum'"), "\(result.stderr)")
    }

    /// The example's own tests ask each kind of StrainTesting question of its model;
    /// in a plain build the race expectation warns that it did not look.
    @Test func theWorkedExamplesOwnTestsAskEachKindOfQuestionAndPass() async throws {
        let (status, output) = try await FixturePackage.locked {
            let (built, buildOutput) = try await FixturePackage.swift(["build", "--build-tests", "--package-path", Self.example, "--scratch-path", FixturePackage.scratch])
            guard built == 0 else { throw FixturePackage.BuildError(output: buildOutput) }
            return try await FixturePackage.swift(["test", "--skip-build", "--package-path", Self.example, "--scratch-path", FixturePackage.scratch])
        }
        #expect(status == 0, "\(output)")
        let source = try String(contentsOfFile: Self.example + "/Tests/OrderModelTests/OrderEdgeTests.swift", encoding: .utf8)
        for question in ["expectCompletes(", "deepestCompleting(", "expectNoStall(", "expectNoRace(", "expectAllocations(", "expectInstructions("] {
            #expect(source.contains(question), "the example's tests ask \(question)")
        }
        #expect(output.contains("Test run with 6 tests in 1 suite passed"), "\(output)")
        #expect(output.contains("races were not checked: this test binary is not built with ThreadSanitizer"), "\(output)")
    }

    @Test func theWorkedExampleBuildsAndItsSuiteEndsAsItExpectsDirectlyAndThroughTheCommandPlugin() async throws {
        let folder = try Self.folder()
        let (result, list) = try await FixturePackage.build(Self.example) { built in
            (try await FixturePackage.run(built + "/order-strain", ["run", "orders.yaml", "--out", folder + "/run", "--format", "json"], directory: Self.example),
             try await FixturePackage.run(built + "/order-strain", ["list"], directory: Self.example))
        }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: folder + "/run/run.json")
        let archives = record.trials.filter { $0.parameters["coding"] == "keyed-archive" }
        #expect(archives.first { $0.strategy.description == "thread(512KiB)" }?.outcome.kind == .stackOverflow)
        #expect(archives.first { $0.strategy.description == "thread(8MiB)" }?.outcome.kind == .completed)
        let caches = record.trials.filter { $0.scenario == "order-cache" }
        #expect(!caches.isEmpty && caches.allSatisfy { $0.outcome.kind == .completed && ($0.metrics.throughputPerSecond ?? 0) > 0 })
        #expect(record.customMetrics?.contains { $0.name == "hit ratio" && $0.unit == .ratio } == true)
        // Its own scenarios and the built-ins, side by side.
        #expect(list.stdout.contains("decode-orders") && list.stdout.contains("order-cache") && list.stdout.contains("cyclic-graph"))

        let (status, output) = try await FixturePackage.locked {
            try await FixturePackage.swift(["package", "--package-path", Self.example, "--scratch-path", FixturePackage.scratch, "--allow-writing-to-package-directory",
             "strain", "--product", "order-strain", "--configuration", "debug",
             "run", "orders.yaml", "--filter", "scenario=order-cache", "--out", folder + "/plugin", "--format", "json"])
        }
        #expect(status == 0, "\(output)")
        #expect(try RunRecordFile.read(from: folder + "/plugin/run.json").trials.count == caches.count)
    }
}

/// `swift package strain …` in the worked example, whose own strain is named
/// `order-strain`: found without `--product`, built in release unless told otherwise,
/// its failures passed on.
///
/// The plugin's default, release, is checked on what it announces and asks SwiftPM to
/// build (a product that does not exist, so nothing compiles); every run here is
/// `--configuration debug`, which reuses the debug objects the user-package tests
/// built in the same scratch folder. A release build of the example over all of
/// StrainCLI cost about 400 s of CPU inside the test run of a fresh clone
/// (29 November 2026), for a check that differs from these by one build parameter.
@Suite(.serialized, .timeLimit(.minutes(60))) struct CommandPluginTests {
    static func plugin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await FixturePackage.locked {
            try await FixturePackage.swift(["package", "--package-path", UserPackageTests.example, "--scratch-path", FixturePackage.scratch,
                                      "--allow-writing-to-package-directory", "strain"] + arguments)
        }
    }

    @Test func thePluginBuildsInReleaseUnlessToldOtherwise() async throws {
        // The product does not exist, so SwiftPM refuses before compiling anything: what
        // the plugin announced and asked for is what a user's plain call builds.
        let release = try await Self.plugin(["--product", "no-such-product", "list"])
        #expect(release.status != 0, "\(release.output)")
        #expect(release.output.contains("Building no-such-product (release)"), "\(release.output)")
        #expect(release.output.contains("could not build no-such-product"), "\(release.output)")
        #expect(!release.output.contains("Compiling"), "nothing compiles for a product that does not exist: \(release.output)")
        let debug = try await Self.plugin(["--product", "no-such-product", "--configuration", "debug", "list"])
        #expect(debug.output.contains("Building no-such-product (debug)"), "\(debug.output)")
    }

    @Test func thePluginRunsThePackagesOwnStrainWhateverItsNameAndPassesItsFailureOnPlainly() async throws {
        let list = try await Self.plugin(["--configuration", "debug", "list"])
        #expect(list.status == 0, "\(list.output)")
        #expect(list.output.contains("decode-orders") && list.output.contains("order-cache"), "the package's own scenarios, without --product: \(list.output)")
        #expect(list.output.contains("Building order-strain (debug)"), "\(list.output)")
        // The plugin's line comes before the build it announces (it came after SwiftPM's
        // output in a CI log): before SwiftPM's first line of the build, whichever it prints.
        let building = try #require(list.output.range(of: "Building order-strain (debug)"))
        let firstBuildLine = ["Building for debugging", "Building for production", "Compiling", "Build complete!"].compactMap { list.output.range(of: $0)?.lowerBound }.min()
        let build = try #require(firstBuildLine, "SwiftPM's build output: \(list.output)")
        #expect(building.lowerBound < build, "\(list.output)")

        let out = try UserPackageTests.folder() + "/orders"
        let run = try await Self.plugin(["--configuration", "debug", "run", "orders.yaml", "--out", out, "--filter", "scenario=decode-orders", "--repetitions", "1"])
        #expect(run.status == 0, "\(run.output)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        #expect(record.environment.buildConfiguration == "debug", "the build the plugin was asked for: \(record.environment.buildConfiguration)")
        #expect(!record.trials.isEmpty && record.trials.allSatisfy { $0.scenario == "decode-orders" }, "\(record.trials.map(\.id.description))")

        let refused = try await Self.plugin(["--configuration", "debug", "explain", "decode-ordrs"])
        #expect(refused.status == 1, "SwiftPM turns every failure into 1: \(refused.output)")
        #expect(refused.output.contains("did you mean 'decode-orders'?"), "strain's own message comes through: \(refused.output)")
        #expect(refused.output.contains("order-strain exited 2"), "\(refused.output)")
        #expect(!refused.output.contains("exit(2)"), "no Swift enum case for a message: \(refused.output)")
        // strain's own error first, then the plugin's line about the status.
        if let own = refused.output.range(of: "did you mean 'decode-orders'?"), let status = refused.output.range(of: "order-strain exited 2") {
            #expect(own.lowerBound < status.lowerBound, "strain's error comes before the exited line: \(refused.output)")
        }

        // A package has no Scenarios/README.md: a suite's mistake points at `strain explain`.
        let missing = try await Self.plugin(["--configuration", "debug", "run", "no-such-suite.yaml"])
        #expect(missing.status == 1, "\(missing.output)")
        #expect(missing.output.contains("no-such-suite.yaml") && missing.output.contains("`strain explain SCENARIO` prints one to start from"), "\(missing.output)")
        #expect(!missing.output.contains("Scenarios/README.md"), "a file only Strain's repository has: \(missing.output)")
        // SwiftPM writes `error: ` before it: strain's `FILE: error: ` read `error: no-such-suite.yaml: error: no such file` (re-trial 35o, F8).
        #expect(missing.output.contains("error: no-such-suite.yaml: no such file"), "one `error:`: \(missing.output)")

        // --product and --configuration after `--` are the program's: the plugin builds
        // the package's strain as asked before `--` (debug), not a product `none` in
        // release. (The program itself does not run here: the plugin builds no
        // libStrainProbe.so beside the package's strain, so its `exec` stops at that, exit 125.)
        let folder = try UserPackageTests.folder()
        let echoed = try await Self.plugin(["--configuration", "debug", "exec", "--out", folder + "/echo", "--", "/bin/echo", "program-got", "--configuration", "release", "--product", "none"])
        #expect(echoed.output.contains("Building order-strain (debug)"), "\(echoed.output)")
        #expect(!echoed.output.contains("Building none"), "\(echoed.output)")
    }
}

/// The commands the README shows, read out of its `sh` blocks: each `strain`
/// command names a subcommand and options the binary has, and the quick ones run.
@Suite(.timeLimit(.minutes(10))) struct READMECommandTests {
    /// The README's `sh` lines, continuation lines joined, comments cut.
    static func shellLines() throws -> [String] {
        let readme = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent("README.md").path, encoding: .utf8)
        var lines: [String] = [], inShell = false, pending = ""
        for line in readme.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inShell = line == "```sh"; continue }
            guard inShell else { continue }
            var text = line
            if let comment = text.range(of: #"\s+#\s.*$"#, options: .regularExpression) { text.removeSubrange(comment) }
            if text.hasPrefix("#") { continue }
            if text.hasSuffix("\\") { pending += text.dropLast() + " "; continue }
            text = pending + text
            pending = ""
            if !text.trimmingCharacters(in: .whitespaces).isEmpty { lines.append(text.trimmingCharacters(in: .whitespaces)) }
        }
        return lines
    }

    /// A command line's words as a shell splits them (single quotes only, which is all the README uses).
    static func words(_ line: String) -> [String] {
        var words: [String] = [], word = "", quoted = false, started = false
        for character in line {
            if character == "'" { quoted.toggle(); started = true } else if character == " " && !quoted {
                if started { words.append(word) }
                word = ""
                started = false
            } else { word.append(character); started = true }
        }
        if started { words.append(word) }
        return words
    }

    @Test func everyStrainCommandInTheREADMENamesASubcommandAndOptionsTheBinaryHas() async throws {
        let commands = try Self.shellLines().flatMap { $0.components(separatedBy: " && ") }.map(Self.words).compactMap { words -> [String]? in
            guard let start = words.firstIndex(where: { $0 == "strain" || $0.hasSuffix("/strain") }), start == 0 || words[0] == "swift" else { return nil }
            return Array(words[(start + 1)...])
        }
        #expect(commands.count >= 6, "the README's strain commands: \(commands)")
        for command in commands {
            let subcommand = command.first ?? "run"
            let help = try await StrainBinary.run([subcommand, "--help"], timeout: 60)
            #expect(help.status == 0, "strain \(subcommand) --help: \(help.stderr)")
            // Words after `--` are the program's own (`strain exec -- PROGRAM --port 8080`).
            for option in command.dropFirst().prefix(while: { $0 != "--" }) where option.hasPrefix("--") || option.hasPrefix("[--") {
                let name = option.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: "=").first.map(String.init) ?? option
                #expect(help.stdout.contains(name), "strain \(command.joined(separator: " ")): \(name) is not an option of \(subcommand)")
            }
        }
    }

    @Test func theREADMEsBisectRunsAsShownAndAnswersABoundary() async throws {
        let line = try #require(try Self.shellLines().first { $0.hasPrefix("strain bisect ") })
        let out = try temporaryFolder() + "/bisect"
        let result = try await StrainBinary.run(Array(Self.words(line).dropFirst()) + ["--out", out], timeout: 300)
        #expect(result.status == 0, "\(line)\n\(result.stdout)\n\(result.stderr)")
        // The README states release figures (772 nodes); the tests' debug build fits fewer, so the shape is checked here, not the number.
        #expect(result.stdout.range(of: #"size ≤ [0-9,]+ completes on thread\(512KiB\)"#, options: .regularExpression) != nil, "\(result.stdout)")
        #expect(result.stdout.contains(" of stack per unit of size"), "the second search's fit: \(result.stdout)")
    }

    @Test func theSetupScriptAUserRunsInstallsNothingOnAMachineThatHasItAll() async throws {
        // .ci/setup ran before the tests, so .ci/setup-user (a part of it) finds everything and changes nothing.
        let result = try await BoundedProcess.run("/bin/bash", [FixturePackage.repository.appendingPathComponent(".ci/setup-user").path], timeout: 120, mergingOutput: true)
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result.stdout)")
    }
}

/// The README a newcomer reads first: short, and every file it links to is in the repository.
@Suite struct READMETests {
    /// The README's `sh` blocks, in order, each its lines.
    static func shellBlocks(_ readme: String) -> [[String]] {
        var blocks: [[String]] = [], current: [String]? = nil
        for line in readme.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                if let block = current { blocks.append(block); current = nil } else if line == "```sh" { current = [] }
                continue
            }
            current?.append(line)
        }
        return blocks
    }

    /// Pasting the quick start ran the development setup too (a JDK, valgrind, glibc's
    /// debug symbols) and a 20-minute test run: its block is the user's command alone,
    /// and the tests' command is a block of its own further down.
    @Test func theQuickStartsBlockSetsUpOnlyWhatAUserNeedsAndTheTestsHaveTheirOwn() throws {
        let readme = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent("README.md").path, encoding: .utf8)
        let quickStart = try #require(readme.components(separatedBy: "\n## Quick start\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let block = try #require(Self.shellBlocks(quickStart).first).joined(separator: "\n")
        #expect(block.contains("bash .ci/setup-user") && block.contains("strain run"), "\(block)")
        #expect(!block.contains("swift test") && !block.contains(".ci/setup &&") && !block.contains(".ci/setup\n"), "\(block)")
        let blocks = Self.shellBlocks(readme).map { $0.joined(separator: "\n") }
        let tests = try #require(blocks.firstIndex { $0.contains("bash .ci/setup && swift test") }, "the tests' command is kept")
        let user = try #require(blocks.firstIndex { $0 == block })
        #expect(tests > user && !blocks[tests].contains("strain run"), "a block of its own, after the quick start")
    }

    /// The sample output said `CyclicGraphScenario.swift:67:46` where a run prints
    /// `:78:46`: every place the docs quote in that file is the archive's decode call.
    @Test func theFileLineColumnTheDocsQuoteIsTheDecodeCall() throws {
        let source = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent("Sources/StrainScenarios/CyclicGraph/CyclicGraphScenario.swift").path, encoding: .utf8)
            .components(separatedBy: "\n")
        var quoted = 0
        for file in ["README.md", "Sources/StrainCLI/StrainCLI.docc/RunningSuites.md"] {
            let text = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent(file).path, encoding: .utf8)
            for match in text.matches(of: /CyclicGraphScenario\.swift:(\d+):(\d+)/) {
                let line = try #require(Int(match.1)), column = try #require(Int(match.2))
                let code = source.indices.contains(line - 1) ? source[line - 1] : ""
                #expect(code.count >= column && code.dropFirst(column - 1).hasPrefix("decodeObject("), "\(file) quotes \(match.0): \(code)")
                quoted += 1
            }
        }
        #expect(quoted >= 2)
    }

    @Test func theREADMEStaysUnderFourHundredLinesAndLinksOnlyToFilesThatExist() throws {
        let readme = try String(contentsOfFile: FixturePackage.repository.appendingPathComponent("README.md").path, encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let count = readme.hasSuffix("\n") ? lines.count - 1 : lines.count
        #expect(count < 400, "README.md has \(count) lines; the reference belongs in the DocC articles")
        // Markdown links outside code blocks: `](target)`. Web addresses and anchors
        // within the page are not files; a target's own anchor (`file.md#part`) is cut.
        var inCode = false
        var targets: [String] = []
        for line in lines {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            guard !inCode else { continue }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                targets.append(String(after[..<close]))
                rest = after[close...]
            }
        }
        let files = targets.filter { !$0.hasPrefix("http://") && !$0.hasPrefix("https://") && !$0.hasPrefix("mailto:") && !$0.hasPrefix("#") }
            .map { $0.split(separator: "#", maxSplits: 1).first.map(String.init) ?? $0 }
        // The map of the documentation is there: a README without links would pass vacuously.
        #expect(files.contains("Sources/StrainCLI/StrainCLI.docc/StrainCLI.md"), "the README links the command line's documentation: \(files)")
        #expect(files.contains("Sources/StrainKit/StrainKit.docc/StrainKit.md"), "the README links the scenario SDK's documentation: \(files)")
        for file in files {
            let path = FixturePackage.repository.appendingPathComponent(file.removingPercentEncoding ?? file).path
            #expect(FileManager.default.fileExists(atPath: path), "README.md links to \(file), which is not in the repository")
        }
    }
}
