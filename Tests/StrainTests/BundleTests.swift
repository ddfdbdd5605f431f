import Foundation
import StrainCLI
import StrainKit
import StrainRecords
import Synchronization
import Testing

/// The release bundle `.ci/bundle` writes, built once per test process for every suite
/// that installs it (the bundle test, the user workflow's test), in `.build/test-bundle`.
enum ReleaseBundle {
    struct Built: Sendable {
        /// `.ci/bundle`'s output and errors; its last line is the tarball's path.
        var output: String
        /// `strain-VERSION-linux-x86_64.tar.gz`.
        var tarball: String
        /// The same tree, unpacked beside it.
        var tree: String
    }

    struct BuildError: Error, CustomStringConvertible {
        var status: Int32
        var output: String
        var description: String { ".ci/bundle exited \(status): \(output.suffix(4000))" }
    }

    static let folder = FixturePackage.repository.appendingPathComponent(".build/test-bundle").path
    /// The first successful build, kept; a failed one is tried again by the next caller.
    private static let built = AsyncOnce<Built>(retryingFailures: true) {
        // `.build`'s own folder lock, then a compile slot (`FixturePackage.compiling`).
        let bundled = try await FixturePackage.locked(scratch: FixturePackage.repository.path + "/.build") {
            try await FixturePackage.compiling(ahead: true) {
                try await BoundedProcess.run("/bin/bash", [FixturePackage.repository.path + "/.ci/bundle", folder],
                                         directory: FixturePackage.repository.path,
                                         environment: ["STRAIN_BUNDLE_IGNORE_LOCK": "1", "TMPDIR": TestFolders.root.path], timeout: 1500, mergingOutput: true)
            }
        }
        guard bundled.status == 0 else { throw BuildError(status: bundled.status, output: bundled.stdout) }
        let name = "strain-\(StrainVersion.current)-linux-x86_64"
        return Built(output: bundled.stdout, tarball: folder + "/\(name).tar.gz", tree: folder + "/" + name)
    }

    /// In a run of the whole suite (no `--filter` or `--skip` among the test process's
    /// arguments), the bundle's build starts with the first child process any test
    /// starts (`BoundedProcess.run` reads this), not when the bundle's own tests get to
    /// it: it heads the run's longest chain (the release build, then the user workflow
    /// on the bundle). A filtered run builds it only if a selected test asks. A failed
    /// build here is built again, and reported, by the test that asks next.
    static let startedForTheWholeSuite: Void = {
        let narrowed = CommandLine.arguments.contains { argument in
            ["--filter", "--skip"].contains { argument == $0 || argument.hasPrefix($0 + "=") }
        }
        guard !narrowed else { return }
        Task.detached { _ = try? await ReleaseBundle.build() }
    }()

    /// Builds the bundle, or returns the one this process already built. The release
    /// build is incremental when .build is already release-built (.ci/run builds it
    /// first); from nothing it takes minutes on a busy 2-core machine. `swift test`
    /// holds .build's lock while tests run: the script is told to build without it.
    static func build() async throws -> Built {
        try await built.value()
    }
}

/// The release bundle `.ci/bundle DIR` writes, unpacked and run as a user without a
/// Swift toolchain would: in a user and mount namespace (`unshare -rm`, no root
/// needed) with a tmpfs over the toolchain's folder.
@Suite(.serialized, .timeLimit(.minutes(60))) struct BundleTests {
    static let repository = FixturePackage.repository.path

    /// The toolchain of the `swift` on PATH: the folder to hide (the one holding
    /// `usr/bin/swift`; the runtime folder `usr/lib/swift` alone when the toolchain
    /// lives in `/usr`, which cannot be hidden whole) and its `libswiftCore.so`.
    static func toolchain() async throws -> (hide: String, swift: String?, libswiftCore: String) {
        let found = try await Tool.run(["sh", "-c", "realpath \"$(command -v swift)\""])
        let swift = found.output.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(found.status == 0 && swift.hasPrefix("/"), "no swift on PATH: \(found.output)")
        let usr = URL(fileURLWithPath: swift).deletingLastPathComponent().deletingLastPathComponent().path
        let libswiftCore = usr + "/lib/swift/linux/libswiftCore.so"
        let root = URL(fileURLWithPath: usr).deletingLastPathComponent().path
        if root == "/" { return (usr + "/lib/swift", nil, libswiftCore) }
        return (root, swift, libswiftCore)
    }

    @Test func theBundleRunsTheDefaultSuiteAProgramUnderExecAndAReportWithTheToolchainHidden() async throws {
        // Refused namespaces fail the test with their cause; a skip would hide a bundle never run.
        let namespace = try await Tool.run(["unshare", "-rm", "true"], timeout: 30)
        try #require(namespace.status == 0, """
            `unshare -rm true` exited \(namespace.status): this machine refuses unprivileged user and mount \
            namespaces (kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, or AppArmor's \
            restrict_unprivileged_userns), so the test cannot hide the toolchain: \(namespace.output)
            """)
        let toolchain = try await Self.toolchain()
        try #require(FileManager.default.fileExists(atPath: toolchain.libswiftCore),
                     "the toolchain's runtime is at \(toolchain.libswiftCore) before it is hidden")

        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bundled = try await ReleaseBundle.build()
        let name = "strain-\(StrainVersion.current)-linux-x86_64"
        let tarball = bundled.tarball
        #expect(bundled.output.hasSuffix(tarball + "\n"), "the last line is the tarball: \(bundled.output.suffix(400))")
        #expect(FileManager.default.fileExists(atPath: bundled.tree + "/bin/strain"), "the unpacked tree is beside it")

        // A fresh folder holds only what the tarball holds.
        let unpacked = folder + "/unpacked"
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        let untar = try await Tool.run(["tar", "-xzf", tarball, "-C", unpacked])
        try #require(untar.status == 0, "\(untar.output)")
        let root = unpacked + "/" + name
        let strain = root + "/bin/strain"
        func text(_ path: String) async -> String { (try? String(contentsOfFile: root + "/" + path, encoding: .utf8)) ?? "" }
        #expect(FileManager.default.isExecutableFile(atPath: strain))
        #expect(FileManager.default.fileExists(atPath: root + "/bin/libStrainProbe.so"), "the probe is next to strain, where exec finds it")
        await #expect(text("share/bash-completion/completions/strain").contains("-F _strain strain"), "bash completion")
        await #expect(text("share/zsh/site-functions/_strain").hasPrefix("#compdef strain"), "zsh completion")
        await #expect(text("share/fish/vendor_completions.d/strain.fish").contains("complete -c 'strain'"), "fish completion")
        let manual = await text("share/man/man1/strain.1")
        #expect(manual.contains(".Dt STRAIN 1") && manual.contains(".It Em exec"), "the man page names strain and its subcommands: \(manual.prefix(300))")
        #expect(manual.hasSuffix(ExitCodeContract.mdoc() + "\n"), "the man page's EXIT STATUS is Strain's contract: \(manual.suffix(600))")
        let readme = await text("README.md")
        #expect(readme.contains("apt-get install -y ") && readme.contains("libunwind8") && readme.contains("liblzma5"),
                "the README names the runtime packages: \(readme)")

        // Linked to run without the toolchain: no Swift runtime or Foundation library
        // needed, and no run path but $ORIGIN.
        let dynamic = try await Tool.run(["readelf", "-d", strain])
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty && !needed.contains { $0.contains("libswift") || $0.contains("Foundation") || $0.contains("libdispatch") }, "\(needed)")
        let runPaths = dynamic.output.split(separator: "\n").filter { $0.contains("(RUNPATH)") || $0.contains("(RPATH)") }
        #expect(runPaths.allSatisfy { $0.hasSuffix("[$ORIGIN]") }, "\(runPaths)")

        // A bisect by the bundle's strain says its answer holds for a program linked as it is.
        let bisect = try await BoundedProcess.run(strain, ["bisect", "nested-json", "-p", "operation=serialize", "--over", "depth", "--strategy", "thread(512KiB)",
                                                     "--no-slope", "--repetitions", "1", "--out", folder + "/bisect"], directory: folder, timeout: 300)
        #expect(bisect.status == 0, "\(bisect.stdout)\n\(bisect.stderr)")
        #expect(bisect.stdout.contains("as this strain does (the release bundle)"), "\(bisect.stdout.suffix(1500))")

        // The C program is built while the toolchain is still visible (cc may be its clang).
        let program = try await TestPrograms.c().faults
        let work = folder + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // After the mount nothing of the toolchain is left: the check runs in that same
        // shell, so the commands after it cannot have run with the toolchain visible.
        let script = """
            mount -t tmpfs strain-no-toolchain "$HIDE" || { echo "could not mount a tmpfs over $HIDE"; exit 90; }
            if [ -e "$LIBSWIFTCORE" ] || { [ -n "$TOOLCHAIN_SWIFT" ] && [ -e "$TOOLCHAIN_SWIFT" ]; } || command -v swift > /dev/null; then
                echo "the toolchain is still visible"; exit 91
            fi
            echo "toolchain hidden"
            cd "$WORK"
            "$STRAIN" run --out "$WORK/smoke" > "$WORK/run.log" 2>&1; echo "run exited $?"
            "$STRAIN" exec --out "$WORK/exec" -- "$PROGRAM" thread-overflow > "$WORK/exec.log" 2>&1; echo "exec exited $?"
            "$STRAIN" report "$WORK/exec/run.json" > "$WORK/report.log" 2>&1; echo "report exited $?"
            """
        let hidden = try await BoundedProcess.run("/usr/bin/env", ["unshare", "-rm", "/bin/sh", "-c", script], directory: work, environment: [
            "HIDE": toolchain.hide, "LIBSWIFTCORE": toolchain.libswiftCore, "TOOLCHAIN_SWIFT": toolchain.swift ?? "",
            "WORK": work, "STRAIN": strain, "PROGRAM": program,
            "SWIFT_BACKTRACE": "enable=no",
        ], timeout: 600, mergingOutput: true)
        func log(_ file: String) -> String { (try? String(contentsOfFile: work + "/" + file, encoding: .utf8)) ?? "(no \(file))" }
        let lines = hidden.stdout.split(separator: "\n").map(String.init)
        try #require(hidden.status == 0 && lines.first == "toolchain hidden", "hiding \(toolchain.hide) failed: \(hidden.stdout)")

        // The default suite, with no suite named in a folder that has none: the bundle's
        // own copy (share/strain/Scenarios/smoke.yaml), every outcome expected, the records written.
        #expect(log("run.log").contains("Running smoke: ") && log("run.log").contains("share/strain/Scenarios/smoke.yaml"), "\(log("run.log").prefix(500))")
        #expect(lines.contains("run exited 0"), "\(hidden.stdout)\n\(log("run.log").suffix(3000))")
        #expect(log("run.log").contains("every outcome expected"), "\(log("run.log").suffix(2000))")
        let smoke = try? RunRecordFile.read(from: work + "/smoke/run.json")
        #expect(smoke.map { !$0.trials.isEmpty && $0.trials.allSatisfy { $0.outcome.kind != .harnessError } } == true,
                "the run's record: \(smoke.map { "\($0.trials.map(\.outcome.kind))" } ?? "none")")

        // exec: strain ends as its program did (SIGSEGV, 139 in the shell), with the fault recorded and traced.
        #expect(lines.contains("exec exited 139"), "\(hidden.stdout)\n\(log("exec.log"))")
        let exec = try? RunRecordFile.read(from: work + "/exec/run.json")
        let trial = try #require(exec?.trials.first, "no exec record: \(log("exec.log"))")
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome)")
        #expect(trial.outcome.signal == SIGSEGV, "\(trial.outcome)")
        #expect(trial.trace?.cycle?.frames.contains { $0.symbol == "recurse" } == true, "the probe preloaded from beside strain traced it: \(log("exec.log"))")

        // report: the HTML beside the run, naming the fault.
        #expect(lines.contains("report exited 0"), "\(hidden.stdout)\n\(log("report.log"))")
        let html = (try? String(contentsOfFile: work + "/exec/report.html", encoding: .utf8)) ?? ""
        #expect(html.contains("stackOverflow") && html.contains("recurse"), "\(log("report.log")) \(html.prefix(300))")
    }
}
