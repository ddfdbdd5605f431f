import Foundation
import StrainRecords
import StrainReports

/// libFuzzer's entry: any bytes as a run.json. Loading must return a record or a
/// `LoadError`; a loaded record must render in every format without trapping.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRunRecord(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let path = "/tmp/strain-fuzz-run-\(getpid()).json"
    FileManager.default.createFile(atPath: path, contents: Data(UnsafeBufferPointer(start: start, count: count)))
    if let record = try? RunRecordFile.load(from: path) {
        for format in ReportFormat.allCases { _ = try? format.render(record) }
    }
    return 0
}
