import Foundation
import StrainRecords
import StrainReports

/// libFuzzer's entry: any bytes as a run.json. Loading must return a record or a
/// `LoadError`; a loaded record must render in every format without trapping.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRunRecord(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let path = fuzzInputPath
    _ = FileManager.default.createFile(atPath: path, contents: Data(UnsafeBufferPointer(start: start, count: count)))
    if let record = try? RunRecordFile.load(from: path) {
        for format in ReportFormat.allCases { _ = try? format.render(record) }
    }
    return 0
}

/// Where each input is written to be loaded: one file a fuzzing process, removed when it exits.
let fuzzInputPath: String = {
    atexit { unlink(fuzzInputPath) }
    return "/tmp/strain-fuzz-run-\(getpid()).json"
}()

/// libFuzzer's driver, from its runtime (linked by -sanitize=fuzzer).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// SwiftPM links an executable's entry as `FuzzRunRecord_main`: hand over to libFuzzer's driver.
@_cdecl("FuzzRunRecord_main")
public func fuzzRunRecordMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzRunRecord)
}
