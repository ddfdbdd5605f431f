import Foundation
import StrainReports
import StrainText
import Testing

/// report.html as a phone shows it: a browser breaks a line at a hyphen, so `gcd-global`
/// read `gcd-` / `global` at 400 px, `2026-` / `11-30T02:15:14Z`, `--` / `out` and a
/// build path `x86_64-unknown-linux-` / `gnu`. Every hyphenated word of the page's
/// text is kept whole, a path wraps only at its slashes, and markup is left alone.
@Suite struct UnbrokenWordsTests {
    /// The words a reader sees that a browser could still break at a hyphen: the text
    /// outside tags, without the blocks that are not wrapped text and the kept spans.
    static func breakableHyphenatedWords(_ html: String) -> [String] {
        var text = html.replacing(/<(title|style|svg|pre|script|textarea)\b[\s\S]*?<\/\1>/, with: " ")
        text = text.replacing(/<span class="nb">[^<]*<\/span>/, with: " ")
        text = text.replacing(/<[^>]*>/, with: " ")
        return text.split(whereSeparator: \.isWhitespace).map(String.init)
            .filter { $0.count <= 48 && $0.contains(/[A-Za-z0-9-]-[A-Za-z0-9]/) }
    }

    @Test func reportHTMLKeepsEveryHyphenatedWordOnOneLine() throws {
        let html = HTMLReport.render(try ReportTests.fixture())
        #expect(html.contains("<span class=\"nb\">gcd-global</span>"), "a strategy kept whole")
        #expect(html.contains(".nb{white-space:nowrap}"), "the page's style keeps the spans whole")
        let loose = Self.breakableHyphenatedWords(html)
        #expect(loose.isEmpty, "\(loose.prefix(20))")
        // Markup is untouched: the title, the style, every chart and every attribute.
        let title = try #require(html.firstMatch(of: /<title>([^<]*)<\/title>/))
        #expect(!title.1.contains("span"))
        for svg in html.matches(of: /<svg[\s\S]*?<\/svg>/) { #expect(!svg.0.contains("class=\"nb\""), "\(svg.0.prefix(200))") }
        #expect(!html.contains(/="[^"]*<span/), "no span inside an attribute")
    }

    @Test func aShortCodeSpanASentenceQuotesStaysWholeOnTheTerminal() {
        // The no-such-file error broke `(\`strain` / `explain SCENARIO\`` at 80 columns (re-trial 35m).
        let error = "nosuch.yaml: error: no such file; give the path of a .yaml suite (`strain explain SCENARIO` prints one to start from)"
        for width in 34...110 {
            let lines = TerminalStyle(color: false, width: width).fit(error)
            #expect(lines.contains { $0.contains("(`strain explain SCENARIO`") }, "\(width): \(lines)")
            #expect(lines.joined(separator: " ").split(separator: " ") == error.split(separator: " "), "\(width): no word lost or split")
        }
        // A span longer than the limit still breaks between its words, as any text does.
        let long = "see `" + Array(repeating: "word", count: 15).joined(separator: " ") + "` for more"
        for width in [30, 40, 80] {
            #expect(TerminalStyle(color: false, width: width).fit(long).allSatisfy { $0.count <= width }, "\(TerminalStyle(color: false, width: width).fit(long))")
        }
        #expect(TerminalStyle(color: false, width: 30).fit(error).allSatisfy { $0.count <= 30 }, "a narrow window breaks even a short span")
    }

    @Test func aPathWrapsOnlyAtItsSlashesAndEachSegmentStaysWhole() {
        let html = MarkupText.keepingHyphenatedWordsWhole(
            "<p title=\"gcd-global\">built /work/main/.build/x86_64-unknown-linux-gnu/debug/strain with --out, on 2026-11-30T02:15:14Z</p><pre>a-b</pre>")
        #expect(html == "<p title=\"gcd-global\">built /<wbr>work/<wbr>main/<wbr>.build/<wbr><span class=\"nb\">x86_64-unknown-linux-gnu/</span><wbr>debug/<wbr>strain with "
            + "<span class=\"nb\">--out,</span> on <span class=\"nb\">2026-11-30T02:15:14Z</span></p><pre>a-b</pre>", "\(html)")
        // A number keeps its unit, and a long symbol may break after `(`, `,`, `<` and a label's `:`.
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>no progress for 403.2 ms; RLIMIT_STACK (8 MiB) 12 items</p>")
            == "<p>no progress for <span class=\"nb\">403.2 ms;</span> RLIMIT_STACK <span class=\"nb\">(8 MiB)</span> <span class=\"nb\">12 items</span></p>")
        // What the terminal keeps together, a phone keeps together: an operator, its number and what it counts, a depth, a command.
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>≥ 5 repetitions per side, depth 631 (swift build -c release)</p>")
            == "<p><span class=\"nb\">≥ 5 repetitions</span> per side, <span class=\"nb\">depth 631</span> <span class=\"nb\">(swift build -c release)</span></p>")
        // A range keeps what it counts (`of 4–65` / `threads.` at 400 px), a name its `=` (`q` / `= 0.05.`).
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>a median 1.41 ms, of 4–65 threads. Benjamini-Hochberg q = 0.05.</p>").contains("<span class=\"nb\">of 4–65 threads.</span>"))
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>a median 1.41 ms, of 4–65 threads. Benjamini-Hochberg q = 0.05.</p>").contains(/<span class="nb">[^<]*q = 0\.05\.[^<]*<\/span>/))
        // A median keeps its figure (`took a median` / `1.37 ms,` at 1400 px, re-trial 35k).
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>a median 1.41 ms, of 4–65 threads.</p>").contains("<span class=\"nb\">median 1.41 ms,</span>"))
        // The gate's verdict kept its count (`passed: 3` / `inconclusive`).
        for width in 40...70 {
            let lines = TerminalStyle(color: false, width: width).fit("Gate (cross-run against baseline-run.json) on gate-small: passed: 3 inconclusive")
            #expect(!lines.contains { $0.hasSuffix(" 3") }, "\(width): \(lines)")
            // Nor its verdict from the count (`on gate-small: passed:` / `3 inconclusive`, re-trial 35j).
            #expect(!lines.contains { $0.hasSuffix("passed:") }, "\(width): \(lines)")
        }
        // A strategy keeps its arguments, a name its `=`, the gate's `[n` its count (`task-executor(2,` / `8MiB)`,
        // `maxConcurrentOperationCount` / `= width` and `[n` / `8/8,` at 80 columns: re-trial 35p, F8).
        for width in 30...70 {
            let lines = TerminalStyle(color: false, width: width)
                .fit("a pool of its own, e.g. task-executor(2, 8MiB) with maxConcurrentOperationCount = width, beyond δ 10% (q 0.00559) [n 8/8, Hodges–Lehmann]")
            #expect(!lines.contains { $0.hasSuffix("task-executor(2,") || $0.hasSuffix("maxConcurrentOperationCount") || $0.hasSuffix("[n") }, "\(width): \(lines)")
        }
        // A command stays whole (`(strain` / `gate --calibrate)` in gate.html's cells).
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>of the baseline (strain gate --calibrate), or an interleaved gate</p>").contains("<span class=\"nb\">(strain gate --calibrate),</span>"))
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>renders it: strain report &lt;file&gt; --out &lt;page.html&gt; as a report</p>").contains("<span class=\"nb\">strain report &lt;file&gt; --out &lt;page.html&gt;</span>"))
        #expect(MarkupText.keepingHyphenatedWordsWhole("<li>FloodThenProbe.run(context:submit:waitForStartsSeconds:) at A.swift:12:5</li>")
            == "<li>FloodThenProbe.<wbr>run(<wbr>context:<wbr>submit:<wbr>waitForStartsSeconds:) at A.swift:12:5</li>")
        // And after a member's `.` (`NSKeyedUnarchiver._decodeArrayOfObjectsForKey(` ran 18 px past
        // its card at 400 px), never inside a file's name or a library's.
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>NSKeyedUnarchiver._decodeArrayOfObjectsForKey(_:) ExecutorJobsAndQueues.swift:112:5,Main.swift:9</p>")
            == "<p>NSKeyedUnarchiver.<wbr>_decodeArrayOfObjectsForKey(<wbr>_:) ExecutorJobsAndQueues.swift:112:5,<wbr>Main.swift:9</p>")
        // Not a library's dot, a compiler clone's or a package path's (a reader searches for `java.lang.StackOverflowError`).
        for word in ["libswift_Concurrency.so+0x71e5f", "_dispatch_worker_thread.cold.5:", "java.lang.StackOverflowError"] {
            #expect(MarkupText.keepingHyphenatedWordsWhole("<p>\(word)</p>") == "<p>\(word)</p>")
        }
        #expect(MarkupText.keepingHyphenatedWordsWhole("<li>hash_combine_range_impl&lt;swift::TargetMetadata&gt;(char*,char*)</li>")
            == "<li>hash_combine_range_impl&lt;<wbr>swift::<wbr>TargetMetadata&gt;(<wbr>char*,<wbr>char*)</li>")
        // A Rust path breaks after each `::`, never after the `<` it begins with (a line ended
        // `in <`, and `…futex::Mutex>::lock_contended` ran 14 px past its card at 400 px).
        #expect(MarkupText.keepingHyphenatedWordsWhole("<li>in &lt;std::sys::sync::mutex::futex::Mutex&gt;::lock_contended at futex.rs:61:13</li>")
            == "<li>in &lt;std::<wbr>sys::<wbr>sync::<wbr>mutex::<wbr>futex::<wbr>Mutex&gt;::<wbr>lock_contended at futex.rs:61:13</li>")
        // A word too long for one line stays free to wrap; a lone dash is no word.
        let long = String(repeating: "a-", count: 40)
        #expect(MarkupText.keepingHyphenatedWordsWhole("<td>\(long) - x</td>") == "<td>\(long) - x</td>")
    }
}
