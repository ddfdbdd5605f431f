import Foundation
import Synchronization
import Testing

/// Which expectation of a test a re-run test process runs as its trial: the test,
/// the place of the call, the name it was given and how many calls at that place
/// came before it in this process. The parent and the re-run child count the same
/// way, so the child stops at the call the parent made.
struct ExpectationPlace: Codable, Hashable, Sendable, CustomStringConvertible {
    var test: String
    var fileID: String
    var line: Int
    var column: Int
    var name: String
    var occurrence: Int

    var description: String { "\(name) at \(fileID):\(line):\(column) #\(occurrence) in \(test)" }

    /// Calls counted per test, place and name in this process.
    private static let counts = Mutex<[String: Int]>([:])

    /// The place of this call, counted.
    static func next(name: String, sourceLocation: Testing.SourceLocation) -> ExpectationPlace {
        let test = Test.current.map { "\($0.id)" } ?? "(no test)"
        let key = "\(test)|\(sourceLocation.fileID):\(sourceLocation.line):\(sourceLocation.column)|\(name)"
        let occurrence = counts.withLock { counts in
            counts[key, default: 0] += 1
            return counts[key]!
        }
        return ExpectationPlace(test: test, fileID: sourceLocation.fileID, line: sourceLocation.line, column: sourceLocation.column,
                                name: name, occurrence: occurrence)
    }
}
