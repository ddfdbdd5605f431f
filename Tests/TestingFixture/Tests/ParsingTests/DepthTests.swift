import Dispatch
import Foundation
import Parsing
import StrainTesting
import Testing

/// The deepest document a 512 KiB thread parses, by bisection.
@Suite struct DepthTests {
    static func document(_ levels: Int) -> String {
        String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
    }

    /// The answer is a depth a plain 512 KiB `Thread` in this process parses too.
    @Test func theDeepestDocumentFoundParsesOnAPlain512KiBThread() async {
        let bisection = await deepestCompleting(in: 1...100_000, on: .thread(stackBytes: 512 << 10)) { levels in
            _ = parse(Self.document(levels))
        }
        guard bisection.ran, let deepest = bisection.deepestCompleting else { return }
        #expect(deepest >= 1_000, "\(bisection)")
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = parse(Self.document(deepest))
            done.signal()
        }
        thread.stackSize = 512 << 10
        thread.start()
        done.wait()
        // One level more overflows a plain 512 KiB thread too (in an exit test's own
        // process, which exits 0 if the parse completes instead).
        await #expect(processExitsWith: .signal(SIGSEGV)) { [deepest = deepest as Int] in
            let finished = DispatchSemaphore(value: 0)
            let thread = Thread {
                _ = parse(Self.document(deepest + 1))
                finished.signal()
            }
            thread.stackSize = 512 << 10
            thread.start()
            finished.wait()
            exit(0)
        }
    }

    /// Fails on purpose: asks for more levels than the range holds, to show the answer.
    @Test func failsOnPurposeAMillionLevelsDoNotFitA512KiBThread() async {
        let bisection = await deepestCompleting(in: 1...100_000, on: .thread(stackBytes: 512 << 10)) { levels in
            _ = parse(Self.document(levels))
        }
        guard bisection.ran else { return }
        #expect((bisection.deepestCompleting ?? 0) >= 1_000_000, "\(bisection)")
    }
}
