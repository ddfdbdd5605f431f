import StrainRecords
import StrainWire

/// Turns a child's raw thread dump into the record's: stacks symbolized once
/// per distinct stack, identical stacks grouped, each group summed up in a line.
package struct ThreadDumpBuilder: Sendable {
    package let symbolizer: Symbolizer
    /// Frames named in a group's summary after its wait.
    package var summaryFrames = 3

    package init(symbolizer: Symbolizer) {
        self.symbolizer = symbolizer
    }

    package func dump(from raw: RawDump) -> ThreadDump {
        // Threads stopped in the same place have the same addresses: name each stack once.
        // The thread that took a `strain exec` dump request is a group of its own: a Go
        // thread parked where another is had been summed up as "2 threads — took the dump request".
        let byStack = Dictionary(grouping: raw.threads.filter { !$0.frames.isEmpty }) { StackKey(frames: $0.frames, tookRequest: $0.wait == Self.tookRequestWait) }
        var groups: [String: ThreadGroup] = [:]
        for (stack, threads) in byStack {
            let frames = symbolizer.frames(for: stack.frames, maps: raw.maps, firstIsExact: true)
            // Stacks that differ only in offsets within the same functions are the same story.
            let key = (stack.tookRequest ? "\(Self.tookRequestWait)\n" : "") + frames.map { $0.symbol ?? $0.displayName }.joined(separator: "\n")
            let dumped = threads.map { thread in
                DumpedThread(tid: thread.tid, name: thread.name, state: thread.state, wait: thread.wait, viaPtrace: thread.viaPtrace,
                             framesNotKept: thread.framesTotal.map { $0 - thread.frames.count }.flatMap { $0 > 0 ? $0 : nil })
            }
            if var group = groups[key] {
                group.count += threads.count
                group.threads += dumped
                group.inWork = group.inWork || threads.contains(where: \.inWork)
                groups[key] = group
            } else {
                groups[key] = ThreadGroup(
                    count: threads.count, summary: summary(wait: threads.first?.wait, frames: frames),
                    inWork: threads.contains(where: \.inWork), threads: dumped, frames: frames
                )
            }
        }
        let ordered = groups.values.map { group -> ThreadGroup in
            var group = group
            group.threads.sort { $0.tid < $1.tid }
            return group
        }.sorted { ($0.inWork ? 1 : 0, $0.count, -($0.threads.first?.tid ?? 0)) > ($1.inWork ? 1 : 0, $1.count, -($1.threads.first?.tid ?? 0)) }
        let unreached = raw.threads.filter { $0.frames.isEmpty }.map(\.tid).sorted()
        let method = raw.threads.contains(where: \.viaPtrace) ? (raw.method == "ptrace" ? "ptrace" : "signal+ptrace") : raw.method
        var dump = ThreadDump(method: method, threadCount: raw.threads.count, groups: ordered, waitCycle: raw.waitCycle,
                              unreached: unreached, dumpNanoseconds: raw.dumpNanoseconds)
        dump.sourceLocations = symbolizer.sourceLocations(of: ordered.flatMap(\.frames))
        return dump
    }

    /// `_multiprocessing_SemLock_acquire_impl` in `_multiprocessing.cpython-311-x86_64-linux-gnu.so`:
    /// a symbol that begins with its module's own underscored name and an underscore.
    static func isNamedForItsModule(_ symbol: String, module: String) -> Bool {
        let base = module.prefix { $0 != "." }
        return base.count > 1 && base.hasPrefix("_") && symbol.hasPrefix(base + "_")
    }

    /// A stack's addresses, and whether its thread took the dump request.
    private struct StackKey: Hashable {
        var frames: [UInt64]
        var tookRequest: Bool
    }

    /// Whether `module` is one of the toolchain's or the system's libraries (the Swift
    /// runtime, Foundation, libdispatch, libc's neighbours), not the program's own code.
    static func isLibrary(_ module: String?) -> Bool {
        guard let module else { return false }
        return module.contains("/lib/swift/") || module.hasPrefix("/lib/") || module.hasPrefix("/lib64/") || module.hasPrefix("/usr/lib/")
            || module.hasPrefix("/usr/lib64/") || module.split(separator: "/").last?.hasPrefix("libStrainProbe") == true
    }

    /// Functions of a language's standard library that its compiler puts into the
    /// program's own image (Rust's `std`, `core` and `alloc`, statically linked;
    /// libstdc++'s templates, instantiated in the program): not the program's code,
    /// though its module is the program. `<std::… as core::…>::drop` counts too.
    package static func isLanguageRuntime(_ symbol: String) -> Bool {
        let name = symbol.hasPrefix("<") ? symbol.dropFirst() : symbol[...]
        // `__gthread_mutex_lock` is libstdc++'s gthr-default.h, compiled into the program under std::mutex (re-trial 33n, R4).
        return ["std::", "core::", "alloc::", "__gnu_cxx::", "__cxxabiv1::", "__gthread_"].contains { name.hasPrefix($0) }
    }

    /// Frames of the harness's wrappers around scenario work.
    static let harnessFrames = [
        "strain_", "ScenarioContext.blocking", "ScenarioContext.unit", "runInstrumented", "runSubmitted",
        "closure #1 in runInstrumented", "closure #1 in runSubmitted", "closure #1 in static NamedThread.start",
        "closure #1 in static HarnessThread.start",
    ]

    /// The wait of the thread that took a `strain exec` dump request (`ProbeFolder.tookRequest`).
    package static let tookRequestWait = "took the dump request"

    /// `futex wait ← DispatchQueue.sync(execute:) ← ThreadSafeArray.subscript ← …`:
    /// the wait, then the first functions above the C library and libdispatch's internals,
    /// each frame's inlined functions (innermost first) before its own. A partial-apply
    /// forwarder is named as the closure it forwards to: in a release build the closure,
    /// and the wait, are often inlined into it. Between what the thread waits in (the
    /// first function named) and the program's own code, frames of the toolchain's and
    /// the system's libraries are left out, so the first frame of the program's code is named.
    func summary(wait: String?, frames: [Frame]) -> String {
        var named: [(symbol: String, isProgram: Bool)] = []
        for frame in frames {
            let module = frame.module.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? ""
            // Nor the probe's interposers (its `sigsuspend`, where `dispatch_main` parks the main thread).
            if module.hasPrefix("libc.so") || module.hasPrefix("ld-linux") || module.hasPrefix("libStrainProbe") { continue }
            let inProgram = !Self.isLibrary(frame.module)
            let symbols = (frame.inlined ?? []).compactMap(\.symbol) + (frame.symbol.map { [$0] } ?? [])
            for symbol in symbols {
                let name = symbol.hasSuffix(" [partial apply]") ? String(symbol.dropLast(" [partial apply]".count)) : symbol
                // A leading underscore marks a runtime's internals (`_dispatch_…`, `_PyEval_…`),
                // except in a module named with one, whose own functions carry its name
                // (`_multiprocessing_SemLock_acquire_impl` in `_multiprocessing.cpython-….so`).
                // A C block's body in the program is its own code, though clang names it `__main_block_invoke` (re-trial 33l, F1).
                if name.hasPrefix("_"), !Self.isNamedForItsModule(name, module: module), !(inProgram && name.contains("_block_invoke")) { continue }
                // Compiler glue and the harness's own wrappers say nothing about where the work is.
                if name.contains("thunk") || name.hasPrefix("@") || Self.harnessFrames.contains(where: { name.hasPrefix($0) }) { continue }
                named.append((name, inProgram && !Self.isLanguageRuntime(name)))
            }
        }
        if let first = named.firstIndex(where: \.isProgram), first > 1 { named = [named[0]] + named[first...] }
        // `closure #2 in closure #1 in f()` and `closure #1 in f()` both say "in f": name f's frames once.
        var distinct: [String] = []
        var lastBase = ""
        for (symbol, _) in named {
            let base = symbol.components(separatedBy: " in ").last ?? symbol
            if base == lastBase { continue }
            lastBase = base
            distinct.append(symbol)
        }
        var parts = [wait ?? "running"]
        // The thread that took a `strain exec` dump request was interrupted by it, so /proc
        // shows it answering; its innermost frame (libc's wait, left to the /proc wait in
        // every other thread's summary) still says where it was.
        if let wait, wait == Self.tookRequestWait,
           // Past the signal's return, the probe, and the futex helpers and libc's `syscall` every wait shares (libdispatch's
           // waits call it: a one-thread program's read `in syscall`, re-trial 33j's NEW-7), to the call that says which wait.
           let innermost = frames.first(where: { frame in
               let symbol = frame.symbol ?? ""
               return symbol != "__restore_rt" && symbol != "syscall" && !symbol.contains("futex") && !(frame.module ?? "").contains("libStrainProbe")
           }),
           let symbol = (innermost.inlined ?? []).compactMap(\.symbol).first ?? innermost.symbol {
            parts = ["\(wait) in \(symbol)"]
            // The frames from there outward follow it: a Go thread read `in runtime.futex.abi0 ←
            // runtime.futex.abi0 ← runtime.notesleep ← …`, the named frame again after itself.
            if let named = distinct.firstIndex(of: symbol) { distinct.removeFirst(named + 1) }
        }
        parts += distinct.prefix(summaryFrames)
        if distinct.count > summaryFrames { parts.append("…") }
        return parts.joined(separator: " ← ")
    }
}
