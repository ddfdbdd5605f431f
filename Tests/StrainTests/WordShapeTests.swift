import Foundation
import StrainText
import Testing

/// The word shapes that keep a number with its unit or an option with its command on one
/// line are matched by hand (a regex literal is parsed again at every evaluation, and the
/// line fitting asks about every pair of words: a gate over a run.json of long strings ran
/// past the structured fuzzer's 5 s CPU bound). Each must accept exactly what the regex it
/// replaced did, on the words Strain's pages hold and on hostile ones.
@Suite struct WordShapeTests {
    static let words: [Substring] = [
        // What pages hold.
        "5.65", "29,114", "(8", "12", "4–65", "(4–65", "−3.5", "+2", "-1", "×1", "1.", "1,", "0.05",
        "report", "(report", "`report", "(`report", "reporting", "`gate", "gate)", "list", "lists", "(strain",
        "<file>", "<page.html>", "<a>", "<>", "<<>>", "<a b>", "<a", "a>", "--out", "-c", "-C", "-1", "--", "-", "-é",
        "build", "(build", "(", "", "release", "Build", "é", "e\u{301}", "a\u{301}b",
        // What hostile strings hold: ranges cut short, other dashes, marks on digits, controls.
        "12–", "–12", "1–2–3", "1—2", "1-2", "(−", "(×1,2–3.4", "1\u{301}", "١٢", "１２", "+", "×", "(-(1",
        "<\u{0}>", "<\t>", "-\u{1B}", "report\u{301}", "(`", "``report", "((report", "\u{202E}12",
    ]

    @Test func eachHandMatchedShapeAcceptsWhatItsRegexDid() {
        for word in Self.words {
            let subcommand = /\(?`?(report|gate|run|bisect|exec|dump|explain|baseline|compare|merge|list)/
            #expect(TerminalStyle.Words.startsWithSubcommand(word) == (word.prefixMatch(of: subcommand) != nil), "\(word.debugDescription)")
            #expect(TerminalStyle.Words.isSubcommand(word) == (word.wholeMatch(of: subcommand) != nil), "\(word.debugDescription)")
            #expect(TerminalStyle.Words.isPlaceholder(word) == (word.wholeMatch(of: /<[^ ]+>/) != nil), "\(word.debugDescription)")
            #expect(TerminalStyle.Words.isShortOption(word) == (word.wholeMatch(of: /-[a-zA-Z]/) != nil), "\(word.debugDescription)")
            #expect(TerminalStyle.Words.isLowercaseWord(word) == (word.wholeMatch(of: /\(?[a-z]+/) != nil), "\(word.debugDescription)")
            #expect(TerminalStyle.Words.isNumber(word) == (word.wholeMatch(of: /\(?[-+−×]?[0-9][0-9,.]*(–[0-9][0-9,.]*)?/) != nil),
                    "\(word.debugDescription)")
        }
    }
}
