import Foundation
import StrainKit
import StrainRunner
import Testing

/// `strain exec`'s probe folder is written by the program under test as well as by its
/// probe (its path is in the sanitizers' options): through the built binary, a program
/// that plants huge files of every kind the folder holds still gets its answer within
/// seconds, read to the caps of Limits.md.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ProbeFolderBoundsTests {
    @Test func hugeFilesPlantedInTheProbeFolderAreReadToTheirCapsAndTheAnswerComesInSeconds() async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        // 256 MiB each, sparse: a fault record and a standard error tail of another
        // process, a sanitizer log, the program's own dump and allocation sites.
        let script = """
            probe="$1/probe"
            for name in fault-99999.txt stderr-99999.txt sanitizer.99999 dump-$$-1.txt allocations-$$.txt program-images.txt; do
              truncate -s 256M "$probe/$name"
            done
            sleep 0.5
            exit 3
            """
        let started = Date()
        // Read whole, the 1.5 GiB took minutes (0.25 s a MiB): the bound tells the two
        // apart on a busy machine without timing the answer.
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/bin/sh", "-c", script, "sh", out], timeout: 150)
        _ = started
        #expect(result.termination == .exited(3), "strain ends as its program did: \(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        #expect(record.trials.count == 1)
    }
}
