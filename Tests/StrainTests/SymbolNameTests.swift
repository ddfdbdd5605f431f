import Foundation
import StrainRecords
import StrainRunner
@testable import StrainSymbols
import Testing

/// C++ and Rust names as traces, dumps and stalls show them, from names real programs carry.
@Suite struct SymbolNameTests {
    /// g++ 12.2 (Debian) on a program that runs a lambda on a `std::thread`
    /// (the `lambda.cpp` of `ExecSymbolNameTests`), names from `nm`.
    @Test(arguments: [
        ("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"),
        ("_ZNSt6thread8_InvokerISt5tupleIJZ4mainEUlvE_EEEclEv", "std::thread::_Invoker<std::tuple<main::{lambda()#1}> >::operator()"),
        ("_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZ4mainEUlvE_EEEEE6_M_runEv",
         "std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > >::_M_run"),
        ("_ZSt13__invoke_implIvZ4mainEUlvE_JEET_St14__invoke_otherOT0_DpOT1_", "void std::__invoke_impl<void, main::{lambda()#1}>"),
        ("_ZN12_GLOBAL__N_17descendEPVci", "(anonymous namespace)::descend"),
        // Node 20.20.2's V8 (`nm /usr/bin/node`): an anonymous namespace inside a namespace, and a lambda in a method.
        ("_ZN2v88internal12_GLOBAL__N_16InvokeEPNS0_7IsolateERKNS1_12InvokeParamsE", "v8::internal::(anonymous namespace)::Invoke"),
        ("_ZZN2v88internal8compiler28ArrayBufferViewAccessBuilder11BuildLengthENS0_5TNodeINS0_17JSArrayBufferViewEEENS3_INS0_7ContextEEEENKUlvE0_clEv",
         "v8::internal::compiler::ArrayBufferViewAccessBuilder::BuildLength(v8::internal::TNode<v8::internal::JSArrayBufferView>, "
            + "v8::internal::TNode<v8::internal::Context>)::{lambda()#2}::operator()"),
        // libstdc++.so.6 (`nm -D`): `operator<<` is a name, not two brackets.
        ("_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
         "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >"),
        ("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back"),
    ])
    func aCxxNameLosesOnlyItsOwnParameterList(mangled: String, shown: String) {
        #expect(Symbolizer().demangled(mangled) == shown)
    }

    @Test func aCxxNameWithoutAParameterListIsKeptWhole() {
        #expect(CxxSymbolName.withoutParameters("typeinfo for std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > >")
            == "typeinfo for std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > >")
        #expect(CxxSymbolName.withoutParameters("(anonymous namespace)::descend") == "(anonymous namespace)::descend")
        #expect(CxxSymbolName.withoutParameters("v8::internal::(anonymous namespace)::Invoke") == "v8::internal::(anonymous namespace)::Invoke")
        #expect(CxxSymbolName.withoutParameters("f(unbalanced") == "f")
        #expect(CxxSymbolName.withoutParameters("") == "")
    }

    /// Rust 1.95.0's standard library is built with v0 names: symbols of a program built
    /// here with `rustc -O -g` (a `Mutex<HashMap<…>>` shared with a spawned thread), each
    /// with what LLVM 14's `llvm-cxxfilt` (Debian) printed for it. All 646 `_R` symbols of
    /// that binary came out the same as `llvm-cxxfilt`'s when this was written (a throwaway
    /// program compared them; 629 matched before vendor suffixes were said, 646 after).
    @Test(arguments: [
        ("_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended",
         "<std::sys::sync::mutex::futex::Mutex>::lock_contended"),
        ("_RINvMs0_NtNtNtCsjrHSEGnQ3l9_3std12backtrace_rs9symbolize5gimliNtB6_5Cache11with_globalNCNvB6_7resolves_0EBc_",
         "<std::backtrace_rs::symbolize::gimli::Cache>::with_global::<std::backtrace_rs::symbolize::gimli::resolve::{closure#1}>"),
        ("_RNCINvNtNtCsjrHSEGnQ3l9_3std6thread7current17with_current_nameNCNCNvNtB8_9panicking12default_hook00uE0B8_",
         "std::thread::current::with_current_name::<std::panicking::default_hook::{closure#0}::{closure#0}, ()>::{closure#0}"),
        ("_RNvXNtCsgEmfK2I1SDS_4core3anyReNtB2_3Any7type_idCsjrHSEGnQ3l9_3std", "<&str as core::any::Any>::type_id"),
        ("_RINvXs_NvMNtCslNYArtu3iFV_5alloc5sliceSp9to_vec_inhNtB5_10ConvertVec6to_vecNtNtBa_5alloc6GlobalECsjrHSEGnQ3l9_3std",
         "<u8 as <[_]>::to_vec_in::ConvertVec>::to_vec::<alloc::alloc::Global>"),
        ("_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuENtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8grow_oneB13_",
         "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8)), std::alloc::System>>::grow_one"),
        ("_RNvXs1_NtCsgEmfK2I1SDS_4core3anyDNtB5_3AnyNtNtB7_6marker4SyncNtBG_4SendEL_NtNtB7_3fmt5Debug3fmt",
         "<dyn core::any::Any + core::marker::Sync + core::marker::Send as core::fmt::Debug>::fmt"),
        ("_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRDNtB6_5DebugEL_Bx_3fmtB8_", "<&dyn core::fmt::Debug as core::fmt::Debug>::fmt"),
        ("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtB4_6result6ResultuNtNtNtCsjrHSEGnQ3l9_3std2io5error5ErrorEEB19_",
         "core::ptr::drop_in_place::<core::result::Result<(), std::io::error::Error>>"),
        ("_RINvNtCsgEmfK2I1SDS_4core9panicking13assert_failedyyEB4_", "core::panicking::assert_failed::<u64, u64>"),
        ("_RNvCsfLfy6EI15iL_7___rustc35___rust_no_alloc_shim_is_unstable_v2", "__rustc::__rust_no_alloc_shim_is_unstable_v2"),
        ("_RNvNtNtNtNtNtCsjrHSEGnQ3l9_3std3sys3pal4unix14stack_overflow11thread_info11THREAD_INFO.1",
         "std::sys::pal::unix::stack_overflow::thread_info::THREAD_INFO (.1)"),
    ])
    func aRustV0NameIsDemangledAsLLVMDemanglesIt(mangled: String, shown: String) {
        #expect(Symbolizer().demangled(mangled) == shown)
    }

    /// The same program's own crate keeps legacy names (Rust 1.95 builds a program's code with them by default).
    @Test(arguments: [
        ("_ZN1m4main17h4009bc0cd8b193aaE", "m::main"),
        ("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h168e94e611939a97E", "std::rt::lang_start::{{closure}}"),
        ("_ZN3std3sys9backtrace28__rust_begin_short_backtrace17hd7511b4cd5f0e493E", "std::sys::backtrace::__rust_begin_short_backtrace"),
    ])
    func aLegacyRustNameLosesItsHashAndEscapes(mangled: String, shown: String) {
        #expect(Symbolizer().demangled(mangled) == shown)
    }

    /// Names come from files the program under test brought: malformed ones stay raw, and none runs away.
    @Test func aMalformedOrHostileRustNameIsLeftAsItIs() {
        // `a::<>::<>…`, 1,000 deep: past `maximumDepth`.
        let deep = "_R" + String(repeating: "I", count: 1_000) + "C1a" + String(repeating: "E", count: 1_000)
        // `a::f::<u8, (u8, u8), ((u8, u8), (u8, u8)), …>`: each argument names the one before
        // it twice through back references, so 20 of them would print megabytes: past `maximumLength`.
        func base62(_ value: Int) -> String {
            guard value > 0 else { return "_" }
            let digits = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            var rest = value - 1, text = ""
            repeat { text = String(digits[rest % 62]) + text; rest /= 62 } while rest > 0
            return text + "_"
        }
        var doubling = "INvC1a1fh"
        var previous = doubling.count - 1
        for _ in 0..<20 {
            let start = doubling.count
            doubling += "TB\(base62(previous))B\(base62(previous))E"
            previous = start
        }
        doubling = "_R" + doubling + "E"
        for name in [
            "_RNvC1a", "_R", "_Rx", "_RNvC5ab1f", "_RNvB9_1f", deep, doubling,
            "_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended" + "Z",
        ] {
            #expect(RustSymbolName.demangle(name) == nil, "\(name.prefix(80))")
        }
        #expect(Symbolizer().demangled("_RNvC1a") == "_RNvC1a")
        #expect(RustSymbolName.demangle("_RNvC1a1f") == "a::f")
        // Punycode (RFC 3492's own sample, `ü` in `bücher`) and a vendor suffix.
        #expect(RustSymbolName.demangle("_RNvCu9bcher_kva1f") == "bücher::f")
        #expect(RustSymbolName.demangle("_RNvC1a1f.llvm.123") == "a::f")
    }

    @Test func swiftAndCNamesAreNotReadAsRust() {
        let symbolizer = Symbolizer()
        #expect(symbolizer.demangled("$s9StrainKit8ByteSizeO6formatySSSiFZ") == "static ByteSize.format(_:)")
        #expect(symbolizer.demangled("_Recursion") == "_Recursion")
        #expect(RustSymbolName.legacy(mangled: "_ZN4core3fmt5write17hnothexdigitsxxxxE", demangled: "core::fmt::write::hnothexdigitsxxxx") == nil)
    }
}

/// A C++ program's trace through the built `strain`: frames named whole, not cut at their first `(`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecSymbolNameTests {
    /// g++ on PATH, else clang++ (the Swift toolchain has one), or nil.
    static let cxx: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for name in ["g++", "clang++"] {
            if let path = folders.map({ ($0 as NSString).appendingPathComponent(name) }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
                return path
            }
        }
        return nil
    }()

    @Test(.enabled(if: cxx != nil, "no g++ or clang++ on PATH: install Debian's g++ (apt-get install g++) to check C++ frame names"))
    func aLambdaOnAStdThreadThatOverflowsIsNamedWholeInTheTrace() async throws {
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = (folder as NSString).appendingPathComponent("lambda.cpp")
        try """
            #include <cstdio>
            #include <thread>

            namespace strain {
            namespace {
            // Each call keeps a buffer live, so the recursion eats the thread's stack.
            int descend(volatile char *previous, int depth) {
                volatile char buffer[256];
                buffer[0] = static_cast<char>(depth);
                buffer[255] = previous ? previous[0] : 0;
                return descend(buffer, depth + 1) + buffer[255];
            }
            }
            }

            int main() {
                std::thread worker([] { std::printf("%d\\n", strain::descend(nullptr, 0)); });
                worker.join();
                return 0;
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        let program = (folder as NSString).appendingPathComponent("lambda")
        let built = try await ProgramRun.run(Self.cxx!, ["-O0", "-g", "-pthread", "-o", program, source], timeout: 180)
        try #require(built.termination == .exited(0), "\(built.stderr)")

        let out = (folder as NSString).appendingPathComponent("out")
        let (result, run) = try await ExecTests.exec(program, [], out: out)
        #expect(result.termination == .signaled(SIGSEGV), "strain ends as its program did: \(result.stderr.suffix(1500))")
        let trial = try #require(run?.trials.first, "\(result.stderr.suffix(1500))")
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome.description)")
        let trace = try #require(trial.trace)
        let frames = trace.firstFrames + (trace.cycle?.frames ?? []) + (trace.entryFrames ?? []) + trace.lastFrames
        let symbols = frames.compactMap(\.symbol)
        #expect(symbols.contains("main::{lambda()#1}::operator()"), "\(symbols)")
        #expect(symbols.contains("strain::(anonymous namespace)::descend"), "\(symbols)")
        #expect(symbols.contains("std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > >::_M_run"), "\(symbols)")
        #expect(result.stderr.contains("main::{lambda()#1}::operator()"), "strain prints the trace on its standard error: \(result.stderr.suffix(1500))")
    }
}
