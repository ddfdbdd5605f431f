import Foundation
import StrainKit
import StrainRunner
import Testing

/// A thread started through the probe's pthread_create ran its start routine under the
/// probe's own frame: 176 bytes deeper than alone (a 64 KiB pthread overflowed at 1,092
/// frames under strain exec against 1,094 alone). The start routine is now tail-called;
/// what is left is the probe's thread-local variables (128 bytes measured).
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecThreadDepthTests {
    static let built = AsyncOnce<String> {
        let output = TestPrograms.folder + "/threaddepth"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, TestPrograms.sources + "/threaddepth.c", "-lpthread"])
        return output
    }

    @Test func aThreadStartedThroughTheProbeBeginsAsDeepInItsStackAsAlone() async throws {
        let program = try await Self.built.value()
        let alone = try await ProgramRun.run(program, [])
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (probed, _) = try await ExecTests.exec(program, [], out: out)
        #expect(alone.termination == .exited(0) && probed.termination == .exited(0), "\(probed.stderr)")
        #expect(alone.stdout.hasPrefix("used "), "\(alone.stdout)")
        // What is left is the probe's static TLS, which glibc places at the top of every
        // thread's stack: at most the library's PT_TLS size (144 bytes in a debug build).
        let used = { (text: String) in Int(text.split(separator: " ").dropFirst().first ?? "") }
        let deeper = try #require(used(probed.stdout)) - (try #require(used(alone.stdout)))
        let tls = try #require(try await Self.tlsBytes(), "libStrainProbe.so's PT_TLS segment, read with readelf")
        #expect(deeper <= tls, "the thread's stack in use at its start: under strain exec \(probed.stdout), alone \(alone.stdout), the probe's TLS \(tls) B")
    }

    /// The memory size of libStrainProbe.so's PT_TLS segment (`readelf -lW`), beside the built strain.
    static func tlsBytes() async throws -> Int? {
        let library = ((StrainBinary.path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("libStrainProbe.so")
        let result = try await ProgramRun.run("/usr/bin/env", ["readelf", "-lW", library])
        // `  TLS  0x012bb0 0x0000000000013bb0 0x0000000000013bb0 0x000008 0x000090 R   0x8`
        guard let line = result.stdout.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("TLS ") }) else { return nil }
        let fields = line.split(separator: " ")
        return fields.count > 5 ? Int(fields[5].dropFirst(2), radix: 16) : nil
    }
}
