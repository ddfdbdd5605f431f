import Foundation
import Glibc
import Testing

/// A program that stops itself can neither end nor be judged until something continues
/// it: `strain exec` says so on its standard error instead of waiting without a word.
@Suite struct ExecStoppedTests {
    @Test func aProgramThatStopsItselfIsSaidToBeStoppedAndEndsAsItWouldOnceContinued() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let strain = try BackgroundStrain(["exec", "--out", folder + "/out", "--", "/bin/sh", "-c", "kill -STOP $$; echo resumed"], in: folder)
        let stderrPath = strain.stderrPath
        let notice = /the program \(pid (\d+)\) is stopped \(SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU\): strain waits for it to go on or end; kill -CONT \1 continues it/
        let said = await eventually(within: 30) {
            (try? String(contentsOfFile: stderrPath, encoding: .utf8))?.contains("is stopped (SIGSTOP") == true
        }
        let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        let program = text.firstMatch(of: notice).flatMap { Int32($0.1) }
        #expect(said && program != nil, "\(text)")
        if let program { kill(program, SIGCONT) }
        let result = await strain.finish(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("resumed"), "\(result.stdout)")
        #expect(result.stderr.components(separatedBy: "is stopped").count == 2, "said once: \(result.stderr)")
    }
}
