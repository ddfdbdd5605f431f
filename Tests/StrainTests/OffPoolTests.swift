import Foundation
import Testing

/// The test suite keeps Swift concurrency's cooperative pool free (issue 36): Swift
/// Testing runs every test function on that pool, 2 threads wide here, and a test
/// that waits for a child process, a pipe, a semaphore or a clock on one of them
/// holds it while every other test waits for a thread and its time limit runs.
@Suite struct OffPoolTests {
    /// More waits than the pool has threads, each for a child that ends only when
    /// another task has run: while they are awaited, that task must get a thread. A
    /// helper that blocked its pool thread would hold every thread, the task would
    /// never run, and the children would run to their bound (the waits then throw).
    /// No clock is compared: on a busy machine the task runs late, never not at all.
    @Test func waitingForChildProcessesLeavesThePoolFreeForOtherTests() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let go = folder + "/go"
        let waits = ProcessInfo.processInfo.activeProcessorCount + 2
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<waits {
                group.addTask {
                    let ended = try await BoundedProcess.run("/bin/sh", ["-c", "while [ ! -e '\(go)' ]; do sleep 0.05; done"], timeout: 120)
                    #expect(ended.status == 0)
                }
            }
            // Started after the waits, this task needs a pool thread of its own.
            group.addTask { _ = FileManager.default.createFile(atPath: go, contents: nil) }
            try await group.waitForAll()
        }
    }

    /// The limit on children at once (`BoundedProcess.slots`) is an `AsyncLock` with
    /// slots: two holders of a two-slot lock are inside together (each waits inside
    /// until the other has come; one slot would leave the first waiting forever, and
    /// the 60 s bound ends the test), and a third is never inside with them.
    @Test func aLockWithTwoSlotsLetsTwoHoldersInAtOnceAndNeverThree() async throws {
        let limit = AsyncLock(slots: 2)
        let room = Room(holders: 6)
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { holders in
                    for _ in 0..<6 {
                        holders.addTask { await limit.withLock { await room.enterAndMeetAnother() } }
                    }
                }
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return false
            }
            let first = try await group.next()!
            group.cancelAll()
            await room.releaseEveryone()
            return first
        }
        #expect(finished, "six holders of a two-slot lock did not all get through in 60 s")
        #expect(await room.peak == 2)
    }

    /// The compile slots serve the bundle's build first (the head of the test run's
    /// longest chain: the bundle, then the user workflow on it): a waiter that asks to
    /// go ahead is let in before ordinary waiters who came earlier, and ahead waiters
    /// among themselves in the order they came.
    @Test func aWaiterThatAsksToGoAheadIsLetInBeforeOrdinaryWaitersWhoCameEarlier() async throws {
        let lock = AsyncLock()
        let order = Arrivals()
        let gate = Gate()
        let arrivals: [(name: String, ahead: Bool)] = [("first", false), ("second", false), ("ahead1", true), ("ahead2", true)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            do {
                group.addTask { await lock.withLock { await gate.pass(); await order.append("holder") } }
                try await Self.until { await gate.isHeld }
                // Each arrival queued before the next comes.
                for (index, arrival) in arrivals.enumerated() {
                    group.addTask { await lock.withLock(ahead: arrival.ahead) { await order.append(arrival.name) } }
                    try await Self.until { await lock.waiters == index + 1 }
                }
            } catch {
                await gate.open()
                throw error
            }
            await gate.open()
            try await group.waitForAll()
        }
        #expect(await order.names == ["holder", "ahead1", "ahead2", "first", "second"])
    }

    /// Who got in, in order.
    private actor Arrivals {
        private(set) var names: [String] = []
        func append(_ name: String) { names.append(name) }
    }

    /// One task held until the test opens it.
    private actor Gate {
        private var held: CheckedContinuation<Void, Never>?
        private var opened = false
        var isHeld: Bool { held != nil }

        func pass() async {
            if opened { return }
            await withCheckedContinuation { held = $0 }
        }

        func open() {
            opened = true
            held?.resume()
            held = nil
        }
    }

    /// Polls `condition` until it holds; past 60 s the test fails (a lock that never
    /// queued or never let a waiter in).
    static func until(_ condition: () async -> Bool) async throws {
        for _ in 0..<6000 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the condition did not hold in 60 s")
        throw CancellationError()
    }

    /// Holders inside a lock: each waits until another is inside with it (the last
    /// of all `holders` to come waits for no one: there may be no one left to come).
    private actor Room {
        let holders: Int
        private(set) var peak = 0
        private var inside = 0
        private var entered = 0
        private var open = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(holders: Int) { self.holders = holders }

        func enterAndMeetAnother() async {
            inside += 1
            entered += 1
            peak = max(peak, inside)
            if inside >= 2 || entered == holders || open {
                waiting.forEach { $0.resume() }
                waiting = []
            } else {
                await withCheckedContinuation { waiting.append($0) }
            }
            inside -= 1
        }

        /// Lets everyone through, now and from now on (after the bound: the test has
        /// failed, and its holders must end so that the test can).
        func releaseEveryone() {
            open = true
            waiting.forEach { $0.resume() }
            waiting = []
        }
    }

    /// `OffPool.assertOffPool` is what each blocking helper calls before it waits: inside
    /// a task it records an issue (here expected), on a thread of its own it does not.
    @Test func aBlockingWaitInsideATaskIsReportedAndOneOnItsOwnThreadIsNot() async {
        withKnownIssue("a blocking wait inside a task is reported") {
            OffPool.assertOffPool()
        }
        let onOwnThread = await OffPool.run { withUnsafeCurrentTask { $0 == nil } }
        #expect(onOwnThread, "OffPool.run's body runs outside any task")
    }
}

/// No test source blocks a pool thread where it does not say why it may: every call
/// that waits (a sleep, a semaphore or group wait, a process reap, a pipe read to its
/// end, a poll) either runs on a thread of its own and says so on its line
/// (`// off the pool: REASON`), or is not in a test at all. A new helper that waits on
/// the pool fails here with its file and line.
@Suite struct BlockingCallLintTests {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// The calls that block the calling thread, as ICU patterns.
    static let blocking: [(name: String, pattern: String)] = [
        ("usleep", #"\busleep\("#),
        ("sleep", #"(?<![\w.])sleep\("#),
        ("Thread.sleep", #"Thread\.sleep"#),
        ("waitUntilExit", #"\.waitUntilExit\(\)"#),
        ("readDataToEndOfFile", #"\.readDataToEndOfFile\(\)"#),
        ("wait", #"\.wait\((\)|timeout:|wallTimeout:)"#),
        ("poll", #"(?<![\w.])poll\("#),
        ("waitpid", #"(?<![\w.])waitpid\("#),
        ("DispatchQueue.sync", #"\.sync\s*[({]"#),
    ]

    static func blocks(_ code: String) -> [String] {
        blocking.filter { call in
            // An awaited call of that name is an async helper's (`try await running.wait(…)`).
            guard let match = code.range(of: call.pattern, options: .regularExpression) else { return false }
            return !code[..<match.lowerBound].contains("await ")
        }.map(\.name)
    }

    static let marker = "// off the pool: "

    /// Each line of code in `text` with its number: string literals (the Python and
    /// shell programs the tests run) and comments left out, except the marker.
    static func codeLines(_ text: String) -> [(number: Int, code: String, marked: Bool)] {
        var result: [(Int, String, Bool)] = []
        var inMultiline = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let quotes = line.ranges(of: "\"\"\"").count
            if inMultiline {
                if quotes % 2 == 1 { inMultiline = false }
                continue
            }
            if quotes % 2 == 1 { inMultiline = true }
            let marked = line.contains(marker) && line.split(separator: marker, maxSplits: 1).last.map { !$0.trimmingCharacters(in: .whitespaces).isEmpty } == true
            var code = String(line)
            if let comment = code.range(of: "//") { code = String(code[..<comment.lowerBound]) }
            // Single-line string literals: what is quoted is not code.
            code = code.replacing(/"(\\.|[^"\\])*"/, with: "\"\"")
            result.append((index + 1, code, marked))
        }
        return result
    }

    /// `file:line: call` for each unmarked blocking call under `folder`.
    static func unmarkedBlockingCalls(under folder: URL) -> [String] {
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter {
            $0.hasSuffix(".swift") && !$0.contains("Fixtures/") && !$0.split(separator: "/").contains { $0.hasPrefix(".") }
        } ?? []
        var found: [String] = []
        for file in files.sorted() where file.hasPrefix("StrainTests/") || file.hasPrefix("StrainGateTests/") {
            guard let text = try? String(contentsOfFile: folder.path + "/" + file, encoding: .utf8) else { continue }
            for line in codeLines(text) where !line.marked {
                for call in blocks(line.code) {
                    found.append("\(file):\(line.number): \(call): \(line.code.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        return found
    }

    @Test func everyBlockingCallInTheTestsRunsOffThePoolAndSaysSo() {
        let found = Self.unmarkedBlockingCalls(under: Self.testsFolder)
        #expect(found.isEmpty, "blocking calls that may hold a cooperative thread (await them through OffPool.run or pause, or mark a line that runs on a thread of its own with '\(Self.marker)REASON'):\n\(found.joined(separator: "\n"))")
    }

    @Test func theLintFindsABlockingCallAndAcceptsAMarkedOne() {
        let source = """
            func helper() {
                usleep(1_000)
                semaphore.wait()
                let text = "usleep(5) in a string is not a call"
                process.waitUntilExit() // off the pool: inside OffPool.run
            }
            let script = \"\"\"
                time.sleep(1)
                \"\"\"
            """
        let lines = Self.codeLines(source).filter { !$0.marked && !Self.blocks($0.code).isEmpty }
        #expect(lines.map(\.number) == [2, 3])
    }
}
