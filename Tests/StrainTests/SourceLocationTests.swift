import CStrainProbe
import Foundation
import StrainKit
import StrainReports
import StrainText
@testable import StrainRunner
@testable import StrainSymbols
@testable import StrainWire
import Synchronization
import Testing

/// file:line from the toolchain's llvm-symbolizer, on real addresses of this
/// process and on real traces of child processes.
@Suite struct SourceLocationTests {
    @Test func theToolchainsLLVMSymbolizerIsFoundNextToSwift() throws {
        let path = try #require(Symbolizer.defaultLLVMSymbolizer(), "llvm-symbolizer is installed here (the toolchain's)")
        #expect(path.hasSuffix("/llvm-symbolizer"))
        #expect(LLVMSymbolizer.locate(environment: ["STRAIN_LLVM_SYMBOLIZER": "none", "PATH": "/usr/bin"]) == nil)
    }

    @Test func aCFunctionInThisProcessGetsItsFileAndLine() async throws {
        let function: @convention(c) () -> UInt64 = strain_monotonic_ns
        let address = UInt64(UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self)))
        let maps = ProcFile.contents(of: "/proc/self/maps")
        let frames = await OffPool.run("symbolize") { [maps] in Symbolizer().frames(for: [address + 4], maps: maps, firstIsExact: true) }
        let frame = try #require(frames.first)
        #expect(frame.symbol == "strain_monotonic_ns")
        #expect(frame.file?.hasSuffix("strain_probe.c") == true, "\(frame)")
        #expect((frame.line ?? 0) > 0)
        #expect(frame.location?.hasPrefix("strain_probe.c:") == true)
    }

    @Test func glibcsInternalFramesAreNamedThroughItsSeparateDebugFile() async throws {
        // A Thread's outermost frames are glibc's start_thread and clone3, which
        // libc.so.6's own tables do not name; libc6-dbg's build-id file does.
        // 300 threads parked beside it, as a loaded parallel suite has: /proc/self/maps
        // then runs past what Foundation's String(contentsOfFile:) reads of it (it
        // stops early on /proc files: 80 of 532 lines, libc's not among them), which
        // made this test fail under load, libraries' frames all "?". Strain reads maps
        // to the end (Watchdog.contents), and so does this test.
        let release = DispatchSemaphore(value: 0)
        let parked = (0..<300).map { _ in
            let thread = Thread { release.wait() } // off the pool: a thread of its own, parked
            thread.stackSize = 64 * 1024
            thread.start()
            return thread
        }
        defer { for _ in parked { release.signal() } }
        let addresses = await OffPool.run("return addresses") { Thread.callStackReturnAddresses.map { UInt64($0.uintValue) } }
        let maps = ProcFile.contents(of: "/proc/self/maps")
        let frames = await OffPool.run("symbolize") { [maps] in Symbolizer().frames(for: addresses, maps: maps, firstIsExact: false) }
        let libc = frames.filter { $0.moduleName?.hasPrefix("libc.so") == true }
        #expect(!libc.isEmpty, "the walk's modules: \(frames.map { $0.moduleName ?? "?" }), maps: \(maps.split(separator: "\n").count) lines")
        #expect(libc.allSatisfy { $0.symbol != nil }, "\(libc.map(\.displayName))")
        #expect(libc.contains { $0.symbol == "start_thread" && $0.file?.hasSuffix("pthread_create.c") == true }, "\(libc.map(\.displayName))")
    }

    @Test func withoutLLVMSymbolizerTheNamesStayAndTheTraceSaysWhy() throws {
        let function: @convention(c) () -> UInt64 = strain_monotonic_ns
        let address = UInt64(UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self)))
        let maps = ProcFile.contents(of: "/proc/self/maps")
        let symbolizer = Symbolizer(llvmSymbolizer: nil)
        let frames = symbolizer.frames(for: [address + 4], maps: maps, firstIsExact: true)
        #expect(frames.first?.symbol == "strain_monotonic_ns")
        #expect(frames.first?.file == nil)
        #expect(symbolizer.sourceLocations(of: frames).note?.contains("llvm-symbolizer was not found") == true)
    }
}

/// The demangler's short names, on mangled names taken from real traces.
@Suite struct DemangledNameTests {
    @Test func extensionMethodsKeepTheirTypeAndName() {
        let symbolizer = Symbolizer(llvmSymbolizer: nil)
        #expect(symbolizer.demangled("$sSa10FoundationE19_bridgeToObjectiveCAA7NSArrayCyF") == "Array._bridgeToObjectiveC()")
        #expect(symbolizer.demangled("$sSa10FoundationE19_bridgeToObjectiveCAA7NSArrayCyFyXlxXEfU_") == "closure #1 in Array._bridgeToObjectiveC()")
    }

    @Test func genericMethodsLoseTheirSignatureButNotTheirName() {
        #expect(Symbolizer(llvmSymbolizer: nil).demangled("$sSlsE3mapySayqd__Gqd__7ElementQzqd_0_YKXEqd_0_YKs5ErrorRd_0_r0_lF") == "Collection.map(_:)")
    }

    @Test func anAsyncResumeFunctionIsNamedForItsClosure() {
        #expect(Symbolizer(llvmSymbolizer: nil).demangled("$s9StrainKit12TaskExecutorV7performyyyyYbKcKFyyyYbcXEfU_yyYacfU_TY0_")
            == "closure #1 in closure #1 in TaskExecutor.perform(_:) [async resume]")
    }

    @Test func thunksAndMergedSpecializationsSayWhatTheyAre() {
        let symbolizer = Symbolizer(llvmSymbolizer: nil)
        #expect(symbolizer.demangled("$sxyXlIgno_xyps5NeverOIegnrzr_lTRTA") == "reabstraction thunk [partial apply]")
        #expect(symbolizer.demangled("$s15StrainScenarios16CollectionHammerC5visityyqd__K5ValueQyd__RszAA10StateGuardRd__lFySiYbcfU_AA05ArrayC0VyAA5TokenCG_AA09UnguardedG0CyALGTg5TATm")
            == "closure #1 in CollectionHammer.visit(_:) [partial apply]")
    }

    @Test func noShortNameIsABareParameterList() {
        for name in ["$sSa10FoundationE19_bridgeToObjectiveCAA7NSArrayCyF", "$sSlsE3mapySayqd__Gqd__7ElementQzqd_0_YKXEqd_0_YKs5ErrorRd_0_r0_lF",
                     "$s9StrainKit12TaskExecutorV7performyyyyYbKcKFyyyYbcXEfU_yyYacfU_TY0_", "$sxyXlIgno_xyps5NeverOIegnrzr_lTRTA"] {
            let short = Symbolizer(llvmSymbolizer: nil).demangled(name)
            #expect(!short.hasPrefix("(") && !short.contains(" in ("), "\(name) → \(short)")
        }
    }
}

/// Every format keeps the fault, the cycle with its count, the recursion's entry
/// and the outermost frames, and its markers' counts add up.
@Suite struct TraceLayoutTests {
    static func fixtureTraces() throws -> [FaultTrace] {
        try ReportTests.fixture().trials.compactMap(\.trace)
    }

    @Test func shownFramesMarkersAndTheCyclesSpanAddUpToTheWholeStack() throws {
        let traces = try Self.fixtureTraces()
        #expect(!traces.isEmpty)
        for trace in traces {
            var covered = 0
            var next = 0
            for part in TraceLayout(trace).parts {
                switch part {
                case .frame(let index, _, _):
                    #expect(index == next, "frames are numbered by their place in the stack")
                    covered += 1
                    next = index + 1
                case .skipped(let from, let count), .cycle(_, let from, let count):
                    #expect(from == next)
                    covered += count
                    next = from + count
                }
            }
            #expect(covered == trace.totalFrames, "\(TraceText.headline(trace))")
        }
    }

    @Test func anOverflowKeepsTheFrameThatEnteredTheRecursionAndItsCaller() throws {
        let overflow = try #require(Self.fixtureTraces().first { $0.cycle != nil && $0.cycle!.frames.contains { $0.symbol == "ChainNode.init(coder:)" } })
        let layout = TraceLayout(overflow)
        let entry = try #require(layout.entry)
        #expect(entry.index == overflow.cycle?.endIndex)
        #expect(entry.frame.symbol?.contains("CyclicGraphScenario") == true, "\(entry.frame.displayName)")
        let lines = TraceText.lines(overflow)
        #expect(lines.contains { $0.hasPrefix("#0 ") }, "the fault frame")
        let period = try #require(overflow.cycle?.frames.count)
        #expect(period > 1)
        #expect(lines.contains { $0.contains("⟳ a cycle of \(period) frames × ") }, "\(lines)")
        #expect(lines.contains { $0.contains("← entered the recursion") })
        #expect(lines.last { $0.hasPrefix("#") }?.hasPrefix("#\(Format.count(Double(overflow.totalFrames - 1))) ") == true, "the outermost frame")
        #expect(!lines.contains { $0.contains("cycle of 1 frames") })
    }
}
