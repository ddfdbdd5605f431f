import StrainRunner
import StrainScenarios

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
