internal import CStrainProbe
internal import CStrainTools
import Foundation
import StrainKit

/// Walks a thread of another process from outside, with ptrace and
/// libunwind-ptrace: the fallback for threads that do not answer the dump
/// signal (they block every signal, or the child is too wedged to run its handler).
package enum RemoteUnwinder {
    package struct Stack: Sendable {
        package var frames: [UInt64]
        package var state: String
    }

    /// Frames walked per thread.
    package static let maximumFrames = 192

    /// Seconds the parent spends walking one child's threads, all told: a child
    /// with thousands of threads must not hold the runner for minutes.
    package static let budgetSeconds = 10.0

    /// The thread's stack, or nil when it could not be attached or walked, or
    /// is not (any longer) a thread of `pid`: a tid the child named may have
    /// been reused by another process.
    package static func stack(pid: Int32, tid: Int) -> Stack? {
        guard access("/proc/\(pid)/task/\(tid)", F_OK) == 0 else { return nil }
        var addresses = [UInt] (repeating: 0, count: maximumFrames)
        var state: CChar = 0
        let count = addresses.withUnsafeMutableBufferPointer { buffer in
            strain_ptrace_unwind(Int32(tid), buffer.baseAddress, buffer.count, &state)
        }
        guard count > 0 else { return nil }
        return Stack(frames: addresses.prefix(count).map(UInt64.init), state: String(UnicodeScalar(UInt8(bitPattern: state))))
    }
}
