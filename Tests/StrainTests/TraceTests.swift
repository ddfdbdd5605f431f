import CStrainProbe
import Foundation
import StrainKit
@testable import StrainRunner
@testable import StrainSymbols
@testable import StrainWire
import Testing

@Suite struct RecursionCycleFinderTests {
    @Test func findsThePeriodAndItsRepetitionsInsideAStack() throws {
        let head: [UInt64] = [900, 901]
        let cycle: [UInt64] = [10, 11, 12, 13]
        let tail: [UInt64] = [2, 1]
        let stack = head + Array(repeating: cycle, count: 250).flatMap { $0 } + tail
        let match = try #require(RecursionCycleFinder.find(in: stack))
        #expect(match.period == 4)
        #expect(match.repetitions == 250)
        #expect(match.start == 2)
    }

    @Test func prefersTheShortestPeriodOverItsMultiples() throws {
        let stack: [UInt64] = Array(repeating: [UInt64(5), 6], count: 100).flatMap { $0 }
        let match = try #require(RecursionCycleFinder.find(in: stack))
        #expect(match.period == 2)
        #expect(match.repetitions == 100)
    }

    @Test func findsNothingInAStackWithoutRepetition() {
        #expect(RecursionCycleFinder.find(in: (0..<500).map { UInt64($0) }) == nil)
    }

    @Test func countsThroughFramesTheHandlerCouldNotKeep() async throws {
        // A 3-frame cycle whose middle was dropped: head and tail both repeat it.
        let cycle: [UInt64] = [7, 8, 9]
        var record = try #require(FaultRecord(parsing: "STRAIN-FAULT 1\nsignal 11\nEND\n"))
        record.headFrames = [1] + Array(repeating: cycle, count: 100).flatMap { $0 }
        record.tailFrames = Array(repeating: cycle, count: 100).flatMap { $0 } + [2, 3]
        record.totalFrames = record.headFrames.count + record.tailFrames.count + 3000
        let trace = await OffPool.run("trace") { [record] in TraceBuilder(symbolizer: Symbolizer()).trace(from: record) }
        let found = try #require(trace.cycle)
        #expect(found.frames.count == 3)
        #expect(found.repetitions == 100 + 1000 + 100)
        #expect(trace.omittedFrames == 0, "the cycle stands for the 3,000 frames the handler could not keep")
    }

    @Test func aTraceCountsTheFramesItListsNowhere() async throws {
        // 100 distinct frames, every one kept by the handler: the trace lists the first and last 16.
        var record = try #require(FaultRecord(parsing: "STRAIN-FAULT 1\nsignal 11\nEND\n"))
        record.headFrames = (1...100).map { UInt64($0) }
        record.totalFrames = 100
        let trace = await OffPool.run("trace") { [record] in TraceBuilder(symbolizer: Symbolizer()).trace(from: record) }
        #expect(trace.cycle == nil)
        #expect(trace.firstFrames.count == 16 && trace.lastFrames.count == 16)
        #expect(trace.omittedFrames == 68, "it said 0 while 68 frames were left out")

        // A recursion entered from 100 outer frames: the cycle, 8 frames of its entry and the outermost 16 are listed.
        var recursed = record
        recursed.headFrames = [1, 2] + Array(repeating: [UInt64(7), 8, 9], count: 50).flatMap { $0 } + (1_000..<1_100).map { UInt64($0) }
        recursed.totalFrames = recursed.headFrames.count
        let deep = await OffPool.run("trace") { [recursed] in TraceBuilder(symbolizer: Symbolizer()).trace(from: recursed) }
        let cycle = try #require(deep.cycle)
        #expect(cycle.repetitions == 50 && deep.entryFrames?.count == 8 && deep.lastFrames.count == 16)
        #expect(deep.omittedFrames == 100 - 8 - 16)
    }
}

@Suite struct FaultRecordTests {
    /// The threads and peak RSS a handler read as the process faulted are kept when in range.
    @Test func aFaultRecordKeepsItsThreadsAndPeakRSSWithinTheirRanges() throws {
        let record = try #require(FaultRecord(parsing: "STRAIN-FAULT 1\nsignal 11\nthreads 5\npeak_rss_kb 12000\nEND\n"))
        #expect(record.threads == 5 && record.peakRSSBytes == 12_000 * 1024)
        let classifier = OutcomeClassifier(traceBuilder: TraceBuilder(symbolizer: Symbolizer()), dumpBuilder: ThreadDumpBuilder(symbolizer: Symbolizer()))
        #expect(classifier.classify(record).metrics.peakThreads == 5)
        let wild = try #require(FaultRecord(parsing: "STRAIN-FAULT 1\nsignal 11\nthreads 0\npeak_rss_kb 99999999999999\nEND\n"))
        #expect(wild.threads == nil && wild.peakRSSBytes == nil)
    }

    @Test func parsesTheHandlersRecordWithHeadTailAndMaps() throws {
        let text = """
        RESULT {"ignored": true}
        STRAIN-FAULT 1
        signal 11
        code 2
        address 0x7f0000000ff8
        sp 0x7f0000001000
        tid 42
        overflow 1
        prepared 1
        stack_low 0x7f0000001000
        stack_high 0x7f0000081000
        guard 4096
        depth 631
        frames_total 5
        walk_ns 1200
        frames_head 2
        frames_tail 2
        f 0x10
        f 0x20
        f 0x40
        f 0x50
        maps
        55d0-55e0 r-xp 00001000 08:01 12 /usr/bin/strain
        end-maps
        capture_ns 3400
        END
        """
        let record = try #require(FaultRecord(parsing: text[...]))
        #expect(record.signal == 11)
        #expect(record.isOverflow)
        #expect(record.stackHigh! - record.stackLow! == 512 * 1024)
        #expect(record.headFrames == [0x10, 0x20])
        #expect(record.tailFrames == [0x40, 0x50])
        #expect(record.omittedFrames == 1)
        #expect(record.markedDepth == 631)
        #expect(record.captureNanoseconds == 3400)
        #expect(record.maps.contains("/usr/bin/strain"))
        #expect(record.isComplete)
    }

    @Test func aRecordCutShortIsStillReadButMarkedIncomplete() throws {
        let record = try #require(FaultRecord(parsing: "STRAIN-FAULT 1\nsignal 6\nframes_head 1\nf 0x99\n"[...]))
        #expect(record.signal == 6)
        #expect(record.headFrames == [0x99])
        #expect(!record.isComplete)
    }
}

@Suite struct SymbolizerTests {
    @Test func namesACFunctionInThisProcessFromItsELFSymbolTable() async throws {
        let function: @convention(c) () -> UInt64 = strain_monotonic_ns
        let address = UInt64(UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self)))
        let maps = ProcFile.contents(of: "/proc/self/maps")
        let frames = await OffPool.run("symbolize") { [maps] in Symbolizer().frames(for: [address + 4], maps: maps, firstIsExact: true) }
        let frame = try #require(frames.first)
        #expect(frame.symbol == "strain_monotonic_ns")
        #expect(frame.symbolOffset == 4)
        #expect(frame.module == currentExecutablePath())
    }

    @Test func demanglesSwiftNamesIntoTheirShortForm() {
        let symbolizer = Symbolizer()
        // StrainKit.ByteSize.format(Swift.Int) -> Swift.String
        #expect(symbolizer.demangled("$s9StrainKit8ByteSizeO6formatySSSiFZ") == "static ByteSize.format(_:)")
        #expect(symbolizer.demangled("_ZNSt6vectorIiSaIiEE9push_backERKi") == "std::vector<int, std::allocator<int> >::push_back")
        #expect(symbolizer.demangled("memcpy") == "memcpy")
    }

    /// Real names from Yams (`nm` on a binary that links it, demangled by `swift demangle`):
    /// a private function whose signature mentions a private type read
    /// `Parser.loadSequencefrom: Yams.(Event) throws -> Yams.Node` in every report.
    @Test func aPrivateFunctionWhoseSignatureNamesAPrivateTypeKeepsItsNameAndLabels() {
        #expect(SwiftSymbolName.simplify("Yams.Parser.(loadSequence in _61DADACE4404A34EA4A7CBD5917BB545)(from: Yams.(Event in _61DADACE4404A34EA4A7CBD5917BB545)) throws -> Yams.Node")
                == "Parser.loadSequence(from:)")
        #expect(SwiftSymbolName.simplify("closure #1 ((Yams.Node, Yams.Node)) -> Yams.Node in Yams.Parser.(loadMapping in _61DADACE4404A34EA4A7CBD5917BB545)(from: Yams.(Event in _61DADACE4404A34EA4A7CBD5917BB545)) throws -> Yams.Node")
                == "closure #1 in Parser.loadMapping(from:)")
        #expect(SwiftSymbolName.privateName("loadSequence in _61DADACE4404A34EA4A7CBD5917BB545") == "loadSequence")
        #expect(SwiftSymbolName.privateName("from: Yams.(Event in _61DADACE4404A34EA4A7CBD5917BB545") == nil)
    }

    @Test func shortensFoundationNamesWithPrivateDiscriminators() {
        #expect(SwiftSymbolName.simplify("Foundation.NSKeyedArchiver.(_encodeObject in _885F476806621E9C5CBC3167C719EC73)(_: Swift.Optional<Any>, conditional: Swift.Bool) -> Swift.Optional<Foundation.NSObject>")
            == "NSKeyedArchiver._encodeObject(_:conditional:)")
        #expect(SwiftSymbolName.simplify("protocol witness for Foundation.NSCoding.encode(with: Foundation.NSCoder) -> () in conformance StrainScenarios.ChainNode : Foundation.NSCoding in StrainScenarios")
            == "NSCoding.encode(with:) [witness]")
        #expect(SwiftSymbolName.simplify("function signature specialization <Arg[0] = Owned To Guaranteed> of StrainScenarios.ChainNode.init(coder: Foundation.NSCoder) -> StrainScenarios.ChainNode?")
            == "ChainNode.init(coder:)")
        #expect(SwiftSymbolName.simplify("merged Foundation.NSKeyedArchiver.encode(_: Swift.Optional<Any>, forKey: Swift.String) -> ()")
            == "NSKeyedArchiver.encode(_:forKey:)")
    }
}

@Suite struct ByteSizeAndStrategyTests {
    @Test func parsesAndFormatsStackSizes() {
        #expect(ByteSize.parse("512KiB") == 524_288)
        #expect(ByteSize.parse("8MiB") == 8 << 20)
        #expect(ByteSize.parse("1GiB") == 1 << 30)
        #expect(ByteSize.parse("65536") == 65536)
        #expect(ByteSize.parse("lots") == nil)
        #expect(ByteSize.format(524_288) == "512KiB")
        #expect(ByteSize.format(1_572_864) == "1.5MiB")
    }

    @Test func strategyNamesRoundTrip() throws {
        for text in ["gcd-global", "gcd-global(userInitiated)", "gcd-serial", "gcd-concurrent", "thread(512KiB)", "thread-queue(1MiB)", "main"] {
            #expect(try StrategySpec(parsing: text).description == text)
        }
        #expect(throws: StrategySpec.ParseError.self) { try StrategySpec(parsing: "thread(2GiB)") }
        #expect(throws: StrategySpec.ParseError.self) { try StrategySpec(parsing: "gcd-global(fast)") }
    }
}
