import Foundation
import Testing

/// Colour in `strain run`'s output: on a terminal unless `NO_COLOR` is set, never on
/// a pipe. The run's stdout is a real pseudo-terminal here, as a user's would be.
@Suite(.serialized) struct NoColorTests {
    static let suite = """
        name: colour
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
        """

    /// An SGR sequence (colour, bold, reset): what NO_COLOR turns off. The progress
    /// line's erase (`ESC[2K`) is not colour and stays.
    static var colour: Regex<Substring> { /\u{1B}\[\d{1,2}m/ }

    static func run(terminal: Bool, environment: [String: String] = [:], removing: [String] = []) async throws -> StrainBinary.Result {
        let folder = try temporaryFolder()
        try TestFiles.write(Self.suite, to: folder + "/suite.yaml")
        return try await CommandRun.run(["run", "suite.yaml", "--out", "out", "--format", "json"], in: folder, environment: environment, removing: removing,
                                  terminal: terminal, timeout: 60)
    }

    @Test func onATerminalTheSummaryIsColoured() async throws {
        let result = try await Self.run(terminal: true, removing: ["NO_COLOR"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("\u{1B}[32mevery outcome expected\u{1B}[0m"), "\(result.stdout.debugDescription)")
        #expect(result.stdout.contains("\u{1B}[1m"), "titles in bold: \(result.stdout.debugDescription)")
    }

    @Test func NO_COLORTurnsColourOffOnATerminal() async throws {
        for value in ["1", "yes"] {
            let result = try await Self.run(terminal: true, environment: ["NO_COLOR": value])
            #expect(result.status == 0, "\(result.stdout)")
            #expect(result.stdout.contains("1 trial: every outcome expected"), "\(result.stdout.debugDescription)")
            #expect(result.stdout.firstMatch(of: Self.colour) == nil, "NO_COLOR=\(value): \(result.stdout.debugDescription)")
        }
    }

    @Test func onAPipeThereIsNoEscapeAtAll() async throws {
        let result = try await Self.run(terminal: false, removing: ["NO_COLOR"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 trial: every outcome expected"), "\(result.stdout)")
        #expect(!result.stdout.contains("\u{1B}") && !result.stderr.contains("\u{1B}"), "\(result.stdout.debugDescription)")
    }
}
