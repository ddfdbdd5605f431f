internal import CStrainTools
import Foundation
import StrainRecords
import Synchronization

/// Names the addresses of a child that is gone: the module from the child's
/// /proc/self/maps as it was at the fault, the function from the module's ELF
/// symbol table, Swift, C++ and Rust names demangled, and file:line:column (with the
/// inlined functions) from llvm-symbolizer when one is found.
package final class Symbolizer: Sendable {
    /// Symbol tables by file path, read once per run.
    private let tables = Mutex<[String: ELFSymbolTable?]>([:])
    private let names = Mutex<[String: String]>([:])
    /// llvm-symbolizer's answers by `module@address`.
    private let locations = Mutex<[String: [LLVMSymbolizer.Location]]>([:])
    /// The llvm-symbolizer process, started at the first frame that needs it.
    private let locator: Mutex<(started: Bool, instance: LLVMSymbolizer?)>
    /// Copies of a binary named as the binary itself: the copy's path (as given and
    /// with its links resolved) to the original's (`nameFrames(inCopy:from:)`).
    private let originals = Mutex<[String: String]>([:])

    /// The llvm-symbolizer used for file:line, or nil when there is none.
    package let llvmSymbolizerPath: String?

    /// `llvmSymbolizer`: the executable to use; by default the one next to
    /// `swift`, else on PATH (`STRAIN_LLVM_SYMBOLIZER=none` turns it off).
    package init(llvmSymbolizer: String? = Symbolizer.defaultLLVMSymbolizer()) {
        llvmSymbolizerPath = llvmSymbolizer
        locator = Mutex((started: false, instance: nil))
    }

    /// The toolchain's llvm-symbolizer (next to `swift`), else one on PATH; nil
    /// when there is none or `STRAIN_LLVM_SYMBOLIZER=none`.
    package static func defaultLLVMSymbolizer() -> String? { LLVMSymbolizer.locate() }

    /// Frames in `copy`, a copy of `original` without its debug information (the one
    /// callgrind runs, `objcopy --strip-debug`: the same code at the same offsets), are
    /// named and placed from `original`, and say its name as their module.
    ///
    /// Without it a counted trial's allocation site read `CatalogNode.init(from:)
    /// (strain-stripped)` where the plain trial's read `Workloads.swift:34`.
    package func nameFrames(inCopy copy: String, from original: String) {
        let resolved = URL(fileURLWithPath: copy).resolvingSymlinksInPath().path
        originals.withLock { $0[copy] = original; $0[resolved] = original }
    }

    /// How `frames` got their source locations: the symbolizer, and the modules
    /// none of whose frames has one.
    package func sourceLocations(of frames: [Frame]) -> SourceLocations {
        var withLines = Set<String>()
        var modules: [String] = []
        for frame in frames {
            guard let name = frame.moduleName else { continue }
            if !modules.contains(name) { modules.append(name) }
            if frame.location != nil || frame.inlined?.contains(where: { $0.location != nil }) == true { withLines.insert(name) }
        }
        return SourceLocations(symbolizer: llvmSymbolizerPath, modulesWithoutDebugInfo: modules.filter { !withLines.contains($0) })
    }

    /// One line of /proc/PID/maps that maps a file.
    struct Mapping {
        var start: UInt64
        var end: UInt64
        var fileOffset: UInt64
        var path: String
    }

    static func mappings(_ maps: String) -> [Mapping] {
        maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { return nil }
            let path = fields[5].trimmingCharacters(in: .whitespaces)
            guard path.hasPrefix("/") else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
                  let offset = UInt64(fields[2], radix: 16) else { return nil }
            return Mapping(start: start, end: end, fileOffset: offset, path: path)
        }
    }

    /// Frames for `addresses`; `firstIsExact` when the first address is the
    /// faulting instruction itself rather than a return address.
    package func frames(for addresses: [UInt64], maps: String, firstIsExact: Bool) -> [Frame] {
        let originals = self.originals.withLock { $0 }
        let mappings = Self.mappings(maps).map { mapping in
            var mapping = mapping
            mapping.path = originals[mapping.path] ?? mapping.path
            return mapping
        }
        var cache: [UInt64: Frame] = [:]
        var virtualAddresses: [UInt64?] = []
        let named = addresses.enumerated().map { index, address in
            // A return address points after the call; look up the call itself.
            let lookup = index == 0 && firstIsExact ? address : address &- 1
            var frame = Frame(address: address)
            var virtual: UInt64?
            if let known = cache[lookup] {
                frame = known
                frame.address = address
                virtual = known.moduleOffset.flatMap { offset in known.module.flatMap { table(for: $0)?.virtualAddress(forFileOffset: offset) } }
            } else if let mapping = mappings.first(where: { lookup >= $0.start && lookup < $0.end }) {
                let fileOffset = lookup - mapping.start + mapping.fileOffset
                frame.module = mapping.path
                frame.moduleOffset = fileOffset
                virtual = table(for: mapping.path)?.virtualAddress(forFileOffset: fileOffset)
                name(&frame, virtual: virtual)
                cache[lookup] = frame
            } else {
                cache[lookup] = frame
            }
            virtualAddresses.append(virtual)
            return frame
        }
        return locate(named, virtualAddresses: virtualAddresses)
    }

    /// Frames for addresses given as a module's file and the ELF virtual address in it
    /// (what sanitizers print as `module+0xoffset`: the address less the module's load
    /// bias), each already the instruction itself, not a return address.
    public func frames(inModules places: [(module: String, virtualAddress: UInt64)]) -> [Frame] {
        let named = places.map { place in
            var frame = Frame(address: place.virtualAddress, module: place.module)
            if let table = table(for: place.module), let fileOffset = table.fileOffset(forVirtualAddress: place.virtualAddress) {
                frame.moduleOffset = fileOffset
            }
            name(&frame, virtual: place.virtualAddress)
            return frame
        }
        return locate(named, virtualAddresses: places.map(\.virtualAddress))
    }

    /// Where each function called one of `symbols` (names as `module`'s symbol table
    /// spells them, mangled) starts: its frame at its first instruction, with the file
    /// and line llvm-symbolizer finds in `module`'s debug information. A name the table
    /// lacks is left out; a frame without debug information has no file.
    ///
    /// For names a profiler counted in a copy of `module` that has no debug
    /// information: the copy's symbol table is the original's, so the name finds the
    /// same function, and the original's debug information places it.
    package func definitions(of symbols: [String], in module: String) -> [String: Frame] {
        guard let table = table(for: module) else { return [:] }
        let starts = table.starts(of: Set(symbols))
        let names = symbols.filter { starts[$0] != nil }
        let frames = frames(inModules: names.map { (module: module, virtualAddress: starts[$0]!) })
        return Dictionary(zip(names, frames), uniquingKeysWith: { first, _ in first })
    }

    /// Names `frame` from its module's ELF symbol table at `virtual`.
    private func name(_ frame: inout Frame, virtual: UInt64?) {
        guard let module = frame.module, let virtual, let table = table(for: module),
              let (symbol, offset) = table.symbol(containing: virtual) else { return }
        frame.symbol = demangled(symbol.name)
        frame.symbolOffset = offset
    }

    /// `frames` with file:line:column and inlined functions, for the unique
    /// addresses llvm-symbolizer has not answered yet, asked in one batch.
    /// `virtualAddresses[i]` is frame i's address in its module's ELF view.
    private func locate(_ frames: [Frame], virtualAddresses: [UInt64?]) -> [Frame] {
        guard llvmSymbolizerPath != nil else { return frames }
        func key(_ module: String, _ address: UInt64) -> String { "\(module)@\(address)" }
        var queries: [(module: String, address: UInt64)] = []
        var asked = Set<String>()
        let known = locations.withLock { $0 }
        // A module path comes from a record or a program's maps (a sanitizer log can name any):
        // llvm-symbolizer is asked only about regular files. It opens a module as it is named,
        // and a FIFO kept it (and strain exec) waiting for a writer until its 60 s answer limit.
        var regular: [String: Bool] = [:]
        func isRegularFile(_ path: String) -> Bool {
            if let known = regular[path] { return known }
            var info = stat()
            let answer = stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
            regular[path] = answer
            return answer
        }
        for (frame, virtual) in zip(frames, virtualAddresses) {
            guard let module = frame.module, let virtual, isRegularFile(module) else { continue }
            let id = key(module, virtual)
            if known[id] == nil, asked.insert(id).inserted { queries.append((module, virtual)) }
        }
        if !queries.isEmpty, let tool = symbolizerProcess() {
            let answers = tool.locations(queries)
            locations.withLock { cache in
                for (query, answer) in zip(queries, answers) { cache[key(query.module, query.address)] = answer ?? [] }
            }
        }
        let all = locations.withLock { $0 }
        return zip(frames, virtualAddresses).map { frame, virtual in
            guard let module = frame.module, let virtual,
                  let found = all[key(module, virtual)], let outer = found.last else { return frame }
            var frame = frame
            // The debug information names the function the address is really in, also
            // where the ELF tables have no symbol (glibc's internals, through libc6-dbg).
            if let function = outer.function {
                let name = demangled(function)
                if frame.symbol != name, let start = outer.startAddress, virtual >= start {
                    frame.symbolOffset = virtual - start
                } else if frame.symbol == nil {
                    frame.symbolOffset = nil
                }
                frame.symbol = name
            }
            frame.file = outer.file
            frame.line = outer.line
            frame.column = outer.column
            let inlined = found.dropLast().map { InlinedFrame(symbol: $0.function.map(demangled), file: $0.file, line: $0.line, column: $0.column) }
            frame.inlined = inlined.isEmpty ? nil : Array(inlined)
            return frame
        }
    }

    private func symbolizerProcess() -> LLVMSymbolizer? {
        locator.withLock { state in
            if !state.started, let path = llvmSymbolizerPath {
                state.started = true
                state.instance = LLVMSymbolizer(path: path)
            }
            return state.instance
        }
    }

    /// The data object (a global or a static, a lock say) at `address` in a process
    /// mapped as `maps`, with the offset into it: `first_lock`, or `table+16`. Found
    /// through each module's load bias, so a zero-initialized object past the file's
    /// bytes (`.bss`) is found too; nil when no symbol table names it.
    package func dataObject(at address: UInt64, maps: String) -> String? {
        var seen = Set<String>()
        for mapping in Self.mappings(maps).sorted(by: { $0.start < $1.start }) where !seen.contains(mapping.path) {
            seen.insert(mapping.path)
            guard let table = table(for: mapping.path), !table.objects.isEmpty,
                  let virtual = table.virtualAddress(forFileOffset: mapping.fileOffset), mapping.start >= virtual else { continue }
            let bias = mapping.start - virtual
            guard address >= bias, let (object, offset) = table.object(containing: address - bias) else { continue }
            return demangled(object.name) + (offset == 0 ? "" : "+\(offset)")
        }
        return nil
    }

    private func table(for path: String) -> ELFSymbolTable? {
        if let cached = tables.withLock({ $0[path] }) { return cached }
        let table = ELFSymbolTable(path: path)
        tables.withLock { $0[path] = table }
        return table
    }

    /// A symbol's readable name: Swift, C++ and Rust names demangled, C names as they are.
    package func demangled(_ name: String) -> String {
        if let known = names.withLock({ $0[name] }) { return known }
        var result = name
        // Rust's v0 names (`_R…`, its standard library's) are read here: libstdc++ reads only the legacy ones.
        if let rust = RustSymbolName.demangle(name) {
            result = rust
        } else if let swift = strain_demangle_swift(name) {
            result = SwiftSymbolName.simplify(String(cString: swift))
            free(swift)
        } else if let cxx = strain_demangle_cxx(name) {
            let text = String(cString: cxx)
            free(cxx)
            result = RustSymbolName.legacy(mangled: name, demangled: text) ?? CxxSymbolName.withoutParameters(text)
        }
        names.withLock { $0[name] = result }
        return result
    }
}
