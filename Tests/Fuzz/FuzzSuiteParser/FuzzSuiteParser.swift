import StrainScenarios
import StrainSuite

/// libFuzzer's entry: any bytes as a suite file. The parser must return a suite
/// or a `SuiteError`; a crash, a trap or a hang is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSuiteParser(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    if let suite = try? SuiteParser(catalog: .builtIn).parse(text, path: "fuzz.yaml") {
        // What `strain run` does next: the size check, then the plan (only when small).
        if SuiteLimits.planSizeProblem(suite) == nil { _ = Plan(suite: suite).identity }
    }
    return 0
}

/// libFuzzer's driver, from its runtime (linked by -sanitize=fuzzer).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// SwiftPM links an executable's entry as `FuzzSuiteParser_main`: hand over to libFuzzer's driver.
@_cdecl("FuzzSuiteParser_main")
public func fuzzSuiteParserMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzSuiteParser)
}
