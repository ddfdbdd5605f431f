import Foundation
import Glibc
import StrainRunner
import Testing

/// A program killed by a signal it raised itself, or by the SIGPIPE of its own write to a
/// pipe whose reader had gone, was said to be killed by a signal "sent to it from
/// outside: find who sends it" (re-trial 33o, F3). Its record says the signal may be
/// its own, and a SIGPIPE's advice names the write.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecOwnSignalTests {
    static let built = AsyncOnce<String> {
        let source = TestPrograms.folder + "/ownsignal.c"
        try TestFiles.write("""
            #include <signal.h>
            #include <string.h>
            #include <unistd.h>
            int main(int argc, char **argv) {
                if (argc > 1 && strcmp(argv[1], "pipe") == 0) {
                    int ends[2];
                    if (pipe(ends) != 0) return 2;
                    close(ends[0]);  // the reader is gone: the write's SIGPIPE ends the program
                    write(ends[1], "x", 1);
                    return 3;
                }
                raise(SIGTERM);
                return 4;
            }
            """, to: source)
        let output = TestPrograms.folder + "/ownsignal"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, source])
        return output
    }

    @Test(arguments: [("raise", SIGTERM), ("pipe", SIGPIPE)])
    func aSignalTheProgramGaveItselfIsNotSaidToComeFromOutside(_ kind: String, signal: Int32) async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec(program, [kind], out: out)
        #expect(result.termination == .signaled(signal), "the program's own status: \(result.stderr)")
        let trial = try #require(run?.trials.first, "\(result.stderr)")
        #expect(trial.outcome.message?.contains("sent to it, or raised by itself") == true, "\(trial.outcome.message ?? "")")
        #expect(result.stderr.contains("raised by itself"), "the advice allows for the program's own signal: \(result.stderr)")
        #expect(!result.stderr.contains("did not handle (the program was killed by"), "the advice does not repeat the outcome's message: \(result.stderr)")
        if signal == SIGPIPE {
            #expect(result.stderr.contains("a write to a pipe or socket whose reader had closed it"), "\(result.stderr)")
        }
    }
}
