import StrainRecords

/// The page's one list of verdicts: stacks, thread caps and the C reference.
struct VerdictsBlock: PageSection {
    var stack: StackVerdictSection
    var caps: CapSection
    var reference: ReferenceSection

    var isEmpty: Bool { stack.verdicts.isEmpty && caps.caps.isEmpty && reference.lines.isEmpty }

    func html(into page: inout HTMLReport.Page) {
        guard !isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"verdicts\">\n<h2>Verdicts</h2>\n<ul>")
        for verdict in stack.verdicts { page.raw("<li><b>\(e(verdict.title))</b>: \(e(verdict.explanation))</li>") }
        for (key, verdict) in caps.caps { page.raw("<li><b>\(e(key.description))</b>: \(e(verdict.message))</li>") }
        for line in reference.lines { page.raw("<li>pthread_mutex lock/unlock, the harness against a C loop: \(e(line))</li>") }
        page.raw("</ul>\n</section>\n")
    }
}
