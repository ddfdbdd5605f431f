import Foundation
import StrainKit
import StrainRunner
import Testing

/// `strain exec`'s probe folder is written by the program under test as well as by its
/// probe (its path is in the sanitizers' options): through the built binary, a program
/// that plants huge files of every kind the folder holds still gets its answer within
/// seconds, read to the caps of Limits.md.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ProbeFolderBoundsTests {
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
        // Read whole, the 1.5 GiB took minutes (0.25 s a MiB): the bound tells the two
        // apart on a busy machine without timing the answer.
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/bin/sh", "-c", script, "sh", out], timeout: 150)
        #expect(result.termination == .exited(3), "strain ends as its program did: \(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        #expect(record.trials.count == 1)
    }

    /// A sanitizer log that names a FIFO as a frame's module (found by Tests/Fuzz/structured's
    /// exec family): llvm-symbolizer opened it and waited for a writer, and `strain exec` with
    /// it, until the symbolizer's 60 s answer limit. A module that is not a regular file is
    /// not asked about; the run ends as its program did, well inside a 45 s bound.
    @Test func aSanitizerLogNamingAFIFOAsAModuleDoesNotHoldTheAnswer() async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let script = """
            mkfifo "$1/fifo"
            printf '==%s==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000031 at pc 0x55eb60cbe1d7 bp 0x7ffc43df24f0 sp 0x7ffc43df24e8\nREAD of size 1 at 0x602000000031 thread T0\n    #0 0x400010  (%s/fifo+0x10)\n    #1 0x7fc5ef945249  (/lib/x86_64-linux-gnu/libc.so.6+0x27249)\n\nSUMMARY: AddressSanitizer: heap-use-after-free (%s/fifo+0x10) in main\n==%s==ABORTING\n' $$ "$1" "$1" $$ > "$1/probe/sanitizer.$$"
            exit 3
            """
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/bin/sh", "-c", script, "sh", out], timeout: 45)
        #expect(result.termination == .exited(3), "strain ends as its program did: \(result.stderr)")
        let trial = try #require(try RunRecordFile.read(from: out + "/run.json").trials.first)
        #expect(trial.sanitizerReports?.first?.headline.contains("heap-use-after-free") == true, "the report is read: \(trial.sanitizerReports as Any)")
    }

    /// Thread dumps are read to caps in count, size, threads and frames, and each cut
    /// is said in the record's `leftOut`: four forged dumps of a million frames each took
    /// 89 s and 1.1 GB before (29 November 2026).
    @Test func dumpsPlantedPastTheirCapsAreCountedNotReadAndTheRecordSaysWhatWasLeftOut() async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        // Dump 1 has a thread of 1,000 frames; dump 2 is 17 MiB (sparse); dumps 3 to 72
        // are whole and small: 64 are read (1 and 3 to 65), 7 are counted.
        let script = """
            import os, sys
            probe = sys.argv[1] + "/probe"
            pid = os.getpid()
            maps = open("/proc/self/maps").read()
            def dump(frames):
                return ("STRAIN-DUMP 1\\nrequested_on 0\\ndump_ns 1\\nthread %d\\nanswered 1\\nname planted\\n" % pid
                        + "f 0x1000\\n" * frames + "maps\\n" + maps + "end-maps\\nEND\\n")
            # Each file appears whole, as the probe's own do (written under another name,
            # then renamed): strain reads the folder while the program runs, and one it
            # caught between open and write was an empty dump, not the planted one.
            def write(number, text, size=None):
                with open(probe + "/planting", "w") as f:
                    f.write(text)
                    if size: f.truncate(size)
                os.rename(probe + "/planting", "%s/dump-%d-%d.txt" % (probe, pid, number))
            write(1, dump(1000))
            write(2, "", 17 << 20)
            for number in range(3, 73):
                write(number, dump(1))
            """
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/usr/bin/env", "python3", "-c", script, out], timeout: 150)
        #expect(result.termination == .exited(0), "strain ends as its program did: \(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        let leftOut = try #require(record.trials.first?.leftOut, "\(result.stderr.suffix(2000))")
        #expect(leftOut.contains { $0.hasPrefix("thread dump dump-") && $0.hasSuffix("-1.txt: 744 frames past 256 a thread not read") }, "\(leftOut)")
        #expect(leftOut.contains { $0.hasPrefix("thread dump dump-") && $0.hasSuffix("-2.txt not read: 17 MiB, over the 16 MiB a dump is read to") }, "\(leftOut)")
        #expect(leftOut.contains("7 further thread dumps not read (at most 64 are read in a run)"), "\(leftOut)")
        // The dumps that were read are the program's own, in order; the frame cut kept 256.
        let dumps = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix("dump-") }
        #expect(dumps.count == 64, "\(dumps.sorted())")
    }

    /// A dump the program planted that is not whole (cut before its END line) is read
    /// once and not again: the record says it was not read, rather than nothing.
    @Test func aPlantedDumpThatIsNotWholeIsSaidNotReadInTheRecord() async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let script = """
            printf 'STRAIN-DUMP 1\\nrequested_on 0\\nthread %s\\nanswered 1\\nf 0x1000\\n' $$ > "$1/probe/planting"
            mv "$1/probe/planting" "$1/probe/dump-$$-1.txt"
            exit 3
            """
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/bin/sh", "-c", script, "sh", out], timeout: 60)
        #expect(result.termination == .exited(3), "strain ends as its program did: \(result.stderr)")
        let leftOut = try #require(try RunRecordFile.read(from: out + "/run.json").trials.first?.leftOut, "\(result.stderr.suffix(2000))")
        #expect(leftOut.contains { $0.hasPrefix("thread dump dump-") && $0.hasSuffix("-1.txt not read: not a whole dump when it was read (no STRAIN-DUMP 1 head or END line)") }, "\(leftOut)")
    }

    /// An allocation count the program planted outside 0…2^53 is not recorded (the
    /// structured fuzzer's find: -1 or Int.max made strain exec's own run.json one that
    /// report and gate refused, exit 2); the record says why, and every reader reads it.
    @Test(arguments: ["-1", "9223372036854775807"])
    func anAllocationCountOutOfRangeIsNotRecordedAndTheRecordStillReads(count: String) async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        // os._exit: the probe's own totals, written at exit, would replace the planted file.
        let script = """
            import os, sys
            with open("%s/probe/allocations-%d.txt" % (sys.argv[1], os.getpid()), "w") as f:
                f.write("allocations \(count)\\nbytes 64\\nfrees 1\\n")
            os._exit(0)
            """
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/usr/bin/env", "python3", "-c", script, out], timeout: 60)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        let trial = try #require(record.trials.first)
        #expect(trial.metrics.allocations == nil, "\(String(describing: trial.metrics.allocations))")
        #expect(trial.leftOut?.contains { $0.contains("holds a count outside 0…2^53") } == true, "\(trial.leftOut ?? [])")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", out + "/run.json", "--format", "md", "--out", "-"], timeout: 60)
        #expect(report.termination == .exited(0), "report reads it: \(report.stderr)")
    }
}
