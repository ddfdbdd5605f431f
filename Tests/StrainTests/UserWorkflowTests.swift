import Foundation
import StrainKit
import StrainRecords
import Testing
import Yams

/// The worked example's GitHub Actions workflow (`Tests/Examples/OrderDecoding/.github/workflows/strain.yml`),
/// run on this machine as a runner runs it: a scratch git repository of the example, a
/// clone of it per job, the workflow's `run:` steps in order under bash with the
/// variables the runner sets, and Strain installed from the release bundle `.ci/bundle`
/// writes. A `uses:` step cannot run here: each is skipped by name, and the skipped ones
/// must be exactly the third-party actions below, so logic hidden in one fails the test.
///
/// Six jobs, as a team meets them: the pull request that adds the package's strain
/// (its base has no such product: the job passes and its comment says there is no
/// baseline yet), the push to main that records the baseline for this runner kind, that
/// pull request again with main's baseline in the cache (gated cross-run against it),
/// a later pull request whose gate compares the base build with the head build and
/// posts its verdict, one with a planted stack regression, which the gate fails, and one
/// that does not compile, which fails at its build.
///
/// Kept small on purpose, through the workflow's own knobs: debug builds in the scratch
/// folder the user-package tests share (Strain's modules compile once for all of them;
/// the workflow builds in release into `.build`), and 2 repetitions instead of 10.
@Suite(.serialized, .timeLimit(.minutes(60))) struct UserWorkflowTests {
    static let example = UserPackageTests.example
    static let workflowFile = ".github/workflows/strain.yml"
    /// The marker gate.md starts with (`GateReport.commentMarker`); the workflow's own comment starts with it too.
    static let marker = "<!-- strain-gate -->"

    /// The actions a runner provides and this machine cannot run, per job.
    static let skippedInTheGate = ["actions/checkout@v4", "actions/cache@v4", "actions/cache/restore@v4",
                                   "marocchino/sticky-pull-request-comment@v2", "actions/upload-artifact@v4"]
    static let skippedInTheBaseline = ["actions/checkout@v4", "actions/cache@v4", "actions/cache/save@v4", "actions/upload-artifact@v4"]

    struct Step {
        var name: String
        var run: String?
        var uses: String?
        /// A `uses:` step's inputs (`with:`), as written.
        var inputs: [String: String]
        var condition: String?
        var environment: [String: String]
    }

    struct Job {
        var id: String
        var condition: String?
        var environment: [String: String]
        var steps: [Step]
    }

    struct Workflow {
        var environment: [String: String]
        var shell: String?
        var jobs: [Job]
    }

    struct WorkflowError: Error, CustomStringConvertible {
        var description: String
    }

    /// The workflow file, read with Yams as nodes (so YAML 1.1's `on:` stays a key).
    static func workflow(at path: String) throws -> Workflow {
        let node = try #require(try Yams.compose(yaml: String(contentsOfFile: path, encoding: .utf8)), "\(path) is empty")
        func environment(_ node: Node?) -> [String: String] {
            var values: [String: String] = [:]
            for (key, value) in node?.mapping ?? [:] { if let key = key.string { values[key] = value.string ?? "" } }
            return values
        }
        var jobs: [Job] = []
        for (key, job) in node["jobs"]?.mapping ?? [:] {
            let steps = (job["steps"]?.sequence ?? []).enumerated().map { index, step in
                Step(name: step["name"]?.string ?? step["uses"]?.string ?? "step \(index + 1)", run: step["run"]?.string,
                     uses: step["uses"]?.string, inputs: environment(step["with"]), condition: step["if"]?.string,
                     environment: environment(step["env"]))
            }
            jobs.append(Job(id: key.string ?? "", condition: job["if"]?.string, environment: environment(job["env"]), steps: steps))
        }
        return Workflow(environment: environment(node["env"]), shell: node["defaults"]?["run"]?["shell"]?.string, jobs: jobs)
    }

    /// `${{ expression }}` in `text`, each replaced from `context`; one it does not know throws.
    static func substitute(_ text: String, _ context: [String: String]) throws -> String {
        var result = text
        while let range = result.range(of: #"\$\{\{\s*[^}]*?\s*\}\}"#, options: .regularExpression) {
            let expression = result[range].dropFirst(3).dropLast(2).trimmingCharacters(in: .whitespaces)
            guard let value = context[expression] else {
                throw WorkflowError(description: "`${{ \(expression) }}`: not an expression this test knows (\(context.keys.sorted()))")
            }
            result.replaceSubrange(range, with: value)
        }
        return result
    }

    /// A job's `if:`: comparisons of context values with quoted strings, joined by `&&`.
    static func holds(_ condition: String, _ context: [String: String]) throws -> Bool {
        try condition.components(separatedBy: "&&").allSatisfy { clause in
            let sides = clause.components(separatedBy: "==").map { $0.trimmingCharacters(in: .whitespaces) }
            guard sides.count == 2, let value = context[sides[0]], sides[1].count >= 2, sides[1].hasPrefix("'"), sides[1].hasSuffix("'") else {
                throw WorkflowError(description: "`if: \(condition)`: not a condition this test evaluates")
            }
            return value == String(sides[1].dropFirst().dropLast())
        }
    }

    struct JobRun {
        var workspace: String
        var skipped: [String]
        /// Every step run, in order, with its exit status and output.
        var steps: [(name: String, status: Int32, output: String)]
        var stepSummary: String
        var failed: Bool { steps.contains { $0.status != 0 } }
        var log: String { steps.map { "== \($0.name) (exit \($0.status))\n\($0.output.suffix(6000))" }.joined(separator: "\n") }
        func file(_ path: String) -> String? { try? String(contentsOfFile: workspace + "/" + path, encoding: .utf8) }
    }

    /// Runs the one job `event` selects, in a fresh clone of `origin` at `sha`, as a runner
    /// would: the checkout (fetch-depth 0, done here), then each `run:` step under bash
    /// with the runner's variables, `$GITHUB_ENV` and `$GITHUB_PATH` carried forward, and
    /// the first failing step ending the job.
    ///
    /// `restoring`: what `actions/cache/restore` finds, a folder of this machine for each
    /// `path:` it restores (a cache miss when none is given).
    static func runJob(origin: String, sha: String, event: String, ref: String, baseSHA: String?, bundle: ReleaseBundle.Built,
                       bundleDigest: String, folder: String, overrides: [String: String], restoring: [String: String] = [:]) async throws -> JobRun {
        let runner = folder + "/runner-\(event)-\(sha.prefix(7))-\(UUID().uuidString.prefix(8))"
        let workspace = runner + "/workspace", temp = runner + "/temp"
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        let clone = try await Tool.run(["git", "clone", "--quiet", origin, workspace])
        try #require(clone.status == 0, "\(clone.output)")
        let checkout = try await Tool.run(["git", "-C", workspace, "checkout", "--quiet", "--detach", sha])
        try #require(checkout.status == 0, "\(checkout.output)")

        let workflow = try Self.workflow(at: workspace + "/" + Self.workflowFile)
        #expect(workflow.shell == "bash", "the steps are bash scripts: defaults.run.shell is \(workflow.shell ?? "unset")")
        var context = ["github.event_name": event, "github.ref": ref, "github.sha": sha,
                       "vars.STRAIN_BUNDLE_URL": "file://" + bundle.tarball, "vars.STRAIN_BUNDLE_SHA256": bundleDigest]
        if let baseSHA { context["github.event.pull_request.base.sha"] = baseSHA }
        let selected = try workflow.jobs.filter { job in try job.condition.map { try holds($0, context) } ?? true }
        try #require(selected.count == 1, "one job runs on \(event) to \(ref): \(selected.map(\.id))")
        let job = selected[0]

        let files = ["GITHUB_ENV": temp + "/env", "GITHUB_PATH": temp + "/path", "GITHUB_OUTPUT": temp + "/output",
                     "GITHUB_STEP_SUMMARY": temp + "/step-summary.md"]
        for file in files.values { _ = FileManager.default.createFile(atPath: file, contents: nil) }
        var runnerEnvironment = files.merging([
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": workspace, "GITHUB_EVENT_NAME": event,
            "GITHUB_SHA": sha, "GITHUB_REF": ref, "GITHUB_REPOSITORY": "team/order-decoding", "GITHUB_RUN_ID": "1",
            "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_TEMP": temp,
            // `git config --global` in a step writes here, not to this machine's own configuration.
            "GIT_CONFIG_GLOBAL": runner + "/gitconfig",
        ]) { $1 }
        if event == "pull_request" {
            runnerEnvironment["GITHUB_BASE_REF"] = "main"
            runnerEnvironment["GITHUB_HEAD_REF"] = "feature"
        }
        let basePath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"

        var run = JobRun(workspace: workspace, skipped: [], steps: [], stepSummary: "")
        for step in job.steps {
            guard let script = step.run else {
                run.skipped.append(step.uses ?? step.name)
                if step.uses?.hasPrefix("actions/cache/restore@") == true, let path = step.inputs["path"], let source = restoring[path] {
                    try FileManager.default.copyItem(atPath: source, toPath: workspace + "/" + path)
                }
                continue
            }
            #expect(step.uses == nil && step.condition == nil, "\(step.name): a run step with a condition or a `uses:` this test cannot follow")
            // What the runner sets, then the workflow's, the job's and the step's env, the
            // values earlier steps added to $GITHUB_ENV, and this test's knobs last.
            var environment = runnerEnvironment
            for layer in [workflow.environment, job.environment, step.environment] {
                for (key, value) in layer { environment[key] = try substitute(value, context) }
            }
            let exported = (try? String(contentsOfFile: files["GITHUB_ENV"]!, encoding: .utf8)) ?? ""
            for line in exported.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            environment.merge(overrides) { $1 }
            let paths = ((try? String(contentsOfFile: files["GITHUB_PATH"]!, encoding: .utf8)) ?? "").split(separator: "\n").reversed()
            environment["PATH"] = (paths.map(String.init) + [basePath]).joined(separator: ":")

            let file = temp + "/step-\(run.steps.count + 1).sh"
            try substitute(script, context).write(toFile: file, atomically: true, encoding: .utf8)
            // GitHub's `shell: bash`: bash --noprofile --norc -eo pipefail {0}.
            let ended = try await BoundedProcess.run("/bin/bash", ["--noprofile", "--norc", "-eo", "pipefail", file], directory: workspace,
                                               environment: environment, timeout: 1200, mergingOutput: true)
            run.steps.append((step.name, ended.status, ended.stdout))
            if ended.status != 0 { break }
        }
        run.stepSummary = (try? String(contentsOfFile: files["GITHUB_STEP_SUMMARY"]!, encoding: .utf8)) ?? ""
        return run
    }

    /// Runs `git ARGUMENTS` in `directory` as a test author with no signing, and requires it to succeed.
    @discardableResult
    static func git(_ directory: String, _ arguments: [String]) async throws -> String {
        let result = try await Tool.run(["git", "-C", directory, "-c", "user.name=Strain Tests", "-c", "user.email=tests@strain.invalid",
                                   "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"] + arguments)
        try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.output)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theExamplesWorkflowPassesItsFirstPullRequestRecordsTheBaselineOnMainAndPostsTheGatesVerdictOnTheNext() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bundle = try await ReleaseBundle.build()
        let digest = try await Tool.run(["sha256sum", bundle.tarball])
        try #require(digest.status == 0, "\(digest.output)")
        let bundleDigest = String(digest.output.prefix { $0 != " " })

        // The team's repository. The base: the package before it had a strain (its model alone).
        let origin = folder + "/origin"
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: origin + "/Sources", withIntermediateDirectories: true)
        try await Self.git(origin, ["init", "--quiet", "--initial-branch=main"])
        try fileManager.copyItem(atPath: Self.example + "/Sources/OrderModel", toPath: origin + "/Sources/OrderModel")
        try """
            // swift-tools-version:6.0
            import PackageDescription

            let package = Package(
                name: "OrderDecoding",
                products: [.library(name: "OrderModel", targets: ["OrderModel"])],
                targets: [.target(name: "OrderModel")]
            )

            """.write(toFile: origin + "/Package.swift", atomically: true, encoding: .utf8)
        try "Package.resolved\n.build/\nstrain-reports/\nstrain-baselines/\n".write(toFile: origin + "/.gitignore", atomically: true, encoding: .utf8)
        try await Self.git(origin, ["add", "-A"])
        try await Self.git(origin, ["commit", "--quiet", "-m", "The order model"])
        let modelOnly = try await Self.git(origin, ["rev-parse", "HEAD"])

        // The first pull request: the example as it is, its strain and its workflow, over
        // this checkout of Strain by path (the example's "../../.." is this repository).
        for item in ["Sources/OrderScenarios", "Sources/order-strain", "Tests", "orders.yaml", ".github"] {
            try fileManager.copyItem(atPath: Self.example + "/" + item, toPath: origin + "/" + item)
        }
        let manifest = try String(contentsOfFile: Self.example + "/Package.swift", encoding: .utf8)
        try #require(manifest.contains(#"path: "../../..""#), "the example depends on Strain by the path ../../..")
        try manifest.replacingOccurrences(of: #"path: "../../..""#, with: "path: \"\(FixturePackage.repository.path)\"")
            .write(toFile: origin + "/Package.swift", atomically: true, encoding: .utf8)
        try await Self.git(origin, ["add", "-A"])
        try await Self.git(origin, ["commit", "--quiet", "-m", "Strain: order-strain, its suite and the CI workflow"])
        let withStrain = try await Self.git(origin, ["rev-parse", "HEAD"])

        let overrides = ["STRAIN_CONFIGURATION": "debug", "STRAIN_SCRATCH_PATH": FixturePackage.scratch, "STRAIN_REPETITIONS": "2"]
        func job(_ sha: String, _ event: String, _ ref: String, base: String?, restoring: [String: String] = [:]) async throws -> JobRun {
            // The shared scratch folder is built in by one suite at a time; a job builds there (a compile slot).
            try await FixturePackage.locked {
                try await FixturePackage.compiling {
                    try await Self.runJob(origin: origin, sha: sha, event: event, ref: ref, baseSHA: base, bundle: bundle,
                                    bundleDigest: bundleDigest, folder: folder, overrides: overrides, restoring: restoring)
                }
            }
        }

        // 1. The first pull request: no base product, no baseline yet. It passes and says so.
        let first = try await job(withStrain, "pull_request", "refs/pull/1/merge", base: modelOnly)
        #expect(first.skipped == Self.skippedInTheGate, "the gate job's uses: steps, each skipped by name")
        #expect(!first.failed && first.steps.count == 4, "\(first.log)")
        let firstComment = first.file("strain-reports/comment.md") ?? ""
        #expect(firstComment.hasPrefix(Self.marker), "\(firstComment.prefix(400))")
        #expect(firstComment.contains("no baseline yet, passed") && firstComment.contains("has no `order-strain` product"), "\(firstComment.prefix(1200))")
        #expect(firstComment.contains("decode-orders") && firstComment.contains("order-cache"), "the head's run is in the comment: \(firstComment.prefix(2000))")
        #expect(first.stepSummary.contains("decode-orders"), "strain run --github filled the step summary: \(first.stepSummary.prefix(400))")
        let firstBase = first.steps.first(where: { $0.name == "Build the base commit's strain" })?.output ?? ""
        #expect(firstBase.contains("has no order-strain product"), "\(first.log)")

        // 2. It is merged: the push to main records the baseline for this runner kind, calibrated.
        let main = try await job(withStrain, "push", "refs/heads/main", base: nil)
        #expect(main.skipped == Self.skippedInTheBaseline, "the baseline job's uses: steps, each skipped by name")
        #expect(!main.failed && main.steps.count == 3, "\(main.log)")
        let baselines = (try? fileManager.contentsOfDirectory(atPath: main.workspace + "/strain-baselines")) ?? []
        let swiftVersion = (try await Tool.run(["swift", "--version"]).output.firstMatch(of: #/Swift version ([0-9.]+)/#)?.1).map(String.init) ?? "?"
        let architecture = await Self.architecture()
        let stored = baselines.first { $0.hasPrefix("main-") && $0.hasSuffix("-\(architecture)-swift-\(swiftVersion).json") }
        #expect(stored != nil, "a baseline named by branch, runner kind and toolchain: \(baselines)")
        let recorded = main.steps.last?.output ?? ""
        #expect(recorded.contains("calibrated by 1 A/A run"), "\(main.log)")

        // 3. The first pull request again, the cache now holding main's baseline: this commit's
        // run is gated cross-run against it, and the comment is the gate's.
        let again = try await job(withStrain, "pull_request", "refs/pull/1/merge", base: modelOnly,
                            restoring: ["strain-baselines": main.workspace + "/strain-baselines"])
        // Its verdict is not required to pass: with 2 repetitions a run-to-run difference in the
        // sampled peak thread count (2 → 4 on one row, seen once in three runs here) fails a
        // cross-run gate, which is what the interleaved gate is there to avoid.
        let crossRun = again.file("strain-reports/comment.md") ?? ""
        #expect(crossRun == again.file("strain-reports/gate/gate.md"), "the comment is the cross-run gate's Markdown: \(crossRun.prefix(600))")
        #expect(crossRun.hasPrefix(Self.marker + "\n### Strain gate: orders — ") && crossRun.contains("Cross-run against main-"),
                "\(crossRun.prefix(600))")
        let crossRunVerdict = try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: again.workspace + "/strain-reports/gate/gate.json"))) as? [String: Any]
        #expect(again.steps.count == 4 && again.steps.dropLast().allSatisfy { $0.status == 0 }, "\(again.log)")
        #expect(crossRunVerdict?["exitCode"] as? Int == again.steps.last.map { Int($0.status) }, "the job ends as its gate: \(again.log)")

        // 4. A later pull request plants a change: both builds run interleaved and the verdict is posted.
        try """
            /// A change of the pull request: the gate compares the build with it against the one without.
            public func plantedByTheWorkflowTest(_ order: Order) async -> Int { order.lineCount + 1 }

            """.write(toFile: origin + "/Sources/OrderModel/Planted.swift", atomically: true, encoding: .utf8)
        try await Self.git(origin, ["add", "-A"])
        try await Self.git(origin, ["commit", "--quiet", "-m", "A planted change"])
        let planted = try await Self.git(origin, ["rev-parse", "HEAD"])
        let later = try await job(planted, "pull_request", "refs/pull/2/merge", base: withStrain)
        #expect(later.skipped == Self.skippedInTheGate)
        #expect(!later.failed && later.steps.count == 4, "\(later.log)")
        let comment = later.file("strain-reports/comment.md") ?? ""
        let gateMarkdown = later.file("strain-reports/gate/gate.md")
        #expect(gateMarkdown != nil && comment == gateMarkdown, "the comment is the gate's Markdown: \(comment.prefix(600))")
        #expect(comment.hasPrefix(Self.marker + "\n### Strain gate: orders — passed"), "the verdict heads the comment: \(comment.prefix(600))")
        #expect(comment.contains("Interleaved A/B"), "\(comment.prefix(600))")
        let verdict = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: later.workspace + "/strain-reports/gate/gate.json"))) as? [String: Any]
        #expect(verdict?["exitCode"] as? Int == 0, "gate.json: \(String(describing: verdict?["exitCode"]))")
        #expect(later.stepSummary.contains(Self.marker), "the gate's Markdown in the step summary: \(later.stepSummary.prefix(400))")
        let laterBase = later.steps.first(where: { $0.name == "Build the base commit's strain" })?.output ?? ""
        #expect(laterBase.contains("Built the base commit \(withStrain.prefix(12))"), "\(later.log)")

        // 5. A pull request that regresses: each bundle level keeps 960 bytes more on the stack
        // while its parts decode, so the keyed archive's stack high-water and its depth at the
        // overflow change. The gate fails the job, and its verdict is still posted.
        try await Self.git(origin, ["checkout", "--quiet", "-b", "deeper", withStrain])
        let model = origin + "/Sources/OrderModel/Order.swift"
        let decodeParts = #"        parts = coder.decodeObject(forKey: "parts") as? [LineItem] ?? []"#
        let source = try String(contentsOfFile: model, encoding: .utf8)
        try #require(source.contains(decodeParts), "LineItem.init?(coder:) decodes its parts as the plant expects")
        try source.replacingOccurrences(of: decodeParts, with: """
                    let seed = coder.decodeInteger(forKey: "quantity")
                    parts = withUnsafeTemporaryAllocation(of: Int.self, capacity: 120) { scratch in
                        scratch.initialize(repeating: seed)
                        let decoded = coder.decodeObject(forKey: "parts") as? [LineItem] ?? []
                        return scratch.reduce(0, &+) == 120 &* seed ? decoded : []
                    }
            """).write(toFile: model, atomically: true, encoding: .utf8)
        try await Self.git(origin, ["commit", "--quiet", "-am", "Scratch space on the stack while the parts decode"])
        let deeper = try await Self.git(origin, ["rev-parse", "HEAD"])
        let regressed = try await job(deeper, "pull_request", "refs/pull/3/merge", base: withStrain)
        #expect(regressed.steps.map(\.status) == [0, 0, 0, 1], "the gate step fails the job with exit 1: \(regressed.log)")
        let failing = regressed.file("strain-reports/comment.md") ?? ""
        #expect(failing == regressed.file("strain-reports/gate/gate.md") && failing.contains("**regressed**") && failing.contains("stack"),
                "the failing verdict is posted: \(failing.prefix(1500))")

        // 6. A pull request that does not compile fails at its build, never gating an older binary in its place.
        try await Self.git(origin, ["checkout", "--quiet", "-b", "broken", withStrain])
        try "public let broken: Int = \"not a number\"\n".write(toFile: origin + "/Sources/OrderModel/Broken.swift", atomically: true, encoding: .utf8)
        try await Self.git(origin, ["add", "-A"])
        try await Self.git(origin, ["commit", "--quiet", "-m", "Does not compile"])
        let broken = try await job(try Self.git(origin, ["rev-parse", "HEAD"]), "pull_request", "refs/pull/4/merge", base: withStrain)
        #expect(broken.steps.map(\.status) == [0, 0, 2], "\(broken.log)")
        #expect(broken.steps.last?.output.contains("this commit does not build order-strain") == true, "\(broken.log)")
        #expect(broken.file("strain-reports/comment.md") == nil, "no verdict for a build that failed")
    }

    /// `uname -m`, which the baseline's runner kind ends with.
    static func architecture() async -> String {
        (try? await Tool.run(["uname", "-m"]).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? "?"
    }

    @Test func theWorkflowsLogicLivesInRunStepsAndItsThirdPartyActionsArePinnedToAMajorVersion() throws {
        let workflow = try Self.workflow(at: Self.example + "/" + Self.workflowFile)
        let jobs = Dictionary(uniqueKeysWithValues: workflow.jobs.map { ($0.id, $0) })
        #expect(Set(jobs.keys) == ["gate", "baseline"])
        #expect(jobs["gate"]?.steps.compactMap(\.uses) == Self.skippedInTheGate)
        #expect(jobs["baseline"]?.steps.compactMap(\.uses) == Self.skippedInTheBaseline)
        // Every run step calls the script a laptop runs the same way.
        for job in workflow.jobs {
            for step in job.steps {
                if let run = step.run { #expect(run.contains("bash .github/strain-ci.sh "), "\(job.id): \(step.name)") }
            }
        }
        #expect(workflow.environment["STRAIN_BUNDLE_URL"] == "${{ vars.STRAIN_BUNDLE_URL }}", "Strain comes from the release bundle a variable names")
    }
}
