import CStrainProbe
import CStrainTools
import Dispatch
import Foundation
import StrainRecords
import Testing

/// The fault handler's walk (`strain_walk_interrupted`: libunwind's cached fast trace
/// on a warmed thread) against the `unw_step` loop it replaced, on one real overflow
/// at the guard page, in one handler on the alternate stack: the same frames kept,
/// the same total, the same end, on every thread kind a trial runs work on.
@Suite(.serialized, .timeLimit(.minutes(10))) struct FaultWalkTests {
    /// The fault handler's own split: half head, half tail.
    static let recordCapacity = 1 << 18

    static func check(capacity: Int = recordCapacity, fastLimit: Int = 0) -> strain_fault_walk_check_result {
        var result = strain_fault_walk_check_result()
        let status = strain_fault_walk_check(capacity, fastLimit, &result)
        #expect(status == 0, "errno \(status)")
        return result
    }

    static func fallback(_ result: strain_fault_walk_check_result) -> String {
        withUnsafeBytes(of: result.fallback) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Both walks kept and counted the same frames, and ended the same way.
    static func expectSameRecord(_ result: strain_fault_walk_check_result, _ kind: String) {
        #expect(result.first_mismatch == -1, "\(kind): the kept frames differ at \(result.first_mismatch) of \(result.step_head + result.step_tail)")
        #expect(result.walk_total == result.step_total, "\(kind): \(result.walk_total) frames counted, unw_step counted \(result.step_total)")
        #expect(result.walk_head == result.step_head && result.walk_tail == result.step_tail, "\(kind): head \(result.walk_head)/\(result.step_head), tail \(result.walk_tail)/\(result.step_tail)")
        #expect(result.walk_end == result.step_end, "\(kind): walk ended \(result.walk_end), unw_step \(result.step_end)")
        #expect(result.walk_first_sp == result.step_first_sp && result.walk_last_sp == result.step_last_sp, "\(kind): stack pointers differ")
        #expect(result.step_end == 0, "\(kind): unw_step reached the outermost frame")
        #expect(result.step_total > 1_000, "\(kind): \(result.step_total) frames for an overflow")
    }

    /// The fast trace made the record, and it is today's record.
    static func expectFastAndSame(_ result: strain_fault_walk_check_result, _ kind: String) {
        #expect(result.warm_status == 0, "\(kind): warming failed with errno \(result.warm_status)")
        #expect(result.fast == 1, "\(kind): fell back (\(fallback(result)))")
        expectSameRecord(result, kind)
    }

    static func onThread(stackBytes: Int, _ body: @escaping @Sendable () -> strain_fault_walk_check_result) async -> strain_fault_walk_check_result {
        await InProcessFaults.lock.withLock { await OffPool.run("fault walk", stackBytes: stackBytes, body) }
    }

    @Test func theFastWalkKeepsTodaysRecordOnAThreadsOverflow() async {
        Self.expectFastAndSame(await Self.onThread(stackBytes: 512 << 10) { Self.check() }, "Thread, 512 KiB")
    }

    @Test func theFastWalkKeepsTodaysHeadAndTailOnAnOverflowDeeperThanTheRecordKeeps() async {
        // 1,000 frames kept of an 8 MiB overflow (about 100,000): the head and the tail differ from a plain prefix.
        let result = await Self.onThread(stackBytes: 8 << 20) { Self.check(capacity: 1_000) }
        Self.expectFastAndSame(result, "Thread, 8 MiB, 1,000 frames kept")
        #expect(result.walk_tail == 500 && result.walk_total > 50_000)
    }

    @Test func theFastWalkKeepsTodaysRecordOnAGCDWorkersOverflow() async {
        // async, not sync: sync may run the block on the calling thread.
        let (inTask, result) = await InProcessFaults.lock.withLock {
            await OffPool.onGCDWorker { (withUnsafeCurrentTask { $0 != nil }, Self.check()) }
        }
        #expect(!inTask, "the block ran on a GCD worker, outside any task")
        Self.expectFastAndSame(result, "GCD worker")
    }

    @Test func theFastWalkKeepsTodaysRecordOnASwiftConcurrencyThreadsOverflow() async {
        let result = await InProcessFaults.lock.withLock { await Task.detached { Self.check() }.value }
        Self.expectFastAndSame(result, "Task")
    }

    /// Swift Testing runs no test on the process's main thread here (not even on the
    /// main actor): the main thread's case is a real trial's. Trials run as copies of
    /// the trial server (whose libunwind pipe each copy renews: without that, every
    /// walk in a copy stopped after 1 frame) and spawned.
    @Test(arguments: ["main", "thread(512KiB)", "gcd-global", "task"], ["server", "spawn"])
    func aTrialsOverflowTraceIsTheSameWhicheverWalkMadeIt(strategy: String, isolation: String) async throws {
        let yaml = """
            name: fault-walk
            timeout: 60s
            profiles: [linux]
            runs:
              - scenario: overflow-capture
                parameters: {walk: [fast, step]}
                strategies: [\(strategy)]
                expect: stackOverflow
            """
        let folder = TestFolders.root.appendingPathComponent("strain-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let suite = (folder as NSString).appendingPathComponent("suite.yaml")
        try yaml.write(toFile: suite, atomically: true, encoding: .utf8)
        let out = (folder as NSString).appendingPathComponent("out")
        let result = try await StrainBinary.run(["run", suite, "--out", out, "--isolation", isolation], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let run = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        let fast = try #require(run.trials.first { $0.parameters["walk"] == "fast" }?.trace, "the fast trial has a trace")
        let step = try #require(run.trials.first { $0.parameters["walk"] == "step" }?.trace, "the step trial has a trace")
        #expect(fast.walk == "fast" && fast.walkFallback == nil, "\(strategy), \(isolation): walk \(fast.walk ?? "-"), fell back: \(fast.walkFallback ?? "-")")
        #expect(step.walk == "step" && step.walkFallback == "unw_step chosen")
        func places(_ frames: [Frame]) -> [String] { frames.map { "\($0.module ?? "?")+\($0.moduleOffset ?? 0)" } }
        #expect(fast.isStackOverflow && step.isStackOverflow)
        // Two walks that both stopped after the first frame would agree too.
        #expect(step.totalFrames > 1_000, "\(strategy), \(isolation): the overflow has \(step.totalFrames) frames")
        #expect(fast.totalFrames == step.totalFrames && fast.omittedFrames == step.omittedFrames, "\(strategy), \(isolation): \(fast.totalFrames) against \(step.totalFrames) frames")
        #expect(places(fast.firstFrames) == places(step.firstFrames), "\(strategy): the innermost frames")
        #expect(places(fast.lastFrames) == places(step.lastFrames) && fast.lastStartIndex == step.lastStartIndex, "\(strategy): the outermost frames")
        #expect(places(fast.cycle?.frames ?? []) == places(step.cycle?.frames ?? []) && fast.cycle?.repetitions == step.cycle?.repetitions
                && fast.cycle?.startIndex == step.cycle?.startIndex, "\(strategy): the cycle")
        #expect(fast.cycle != nil, "\(strategy): the recursion was found")
        #expect(fast.walkStoppedShort == false && step.walkStoppedShort == false)
    }

    @Test func aFastWalkThatFillsItsBufferFallsBackToUnwStepAndSaysSo() async {
        // Room for 2,000 frames of a 512 KiB overflow's 8,000: the fast trace cannot count them all.
        let result = await Self.onThread(stackBytes: 512 << 10) { Self.check(fastLimit: 2_000) }
        #expect(result.fast == 0)
        #expect(Self.fallback(result) == "buffer full")
        Self.expectSameRecord(result, "fallback")
    }
}
