import Foundation

/// A Markdown page as GitHub renders it, reduced to what links need: its
/// headings' anchors and the links it makes, code blocks and code spans left out.
struct MarkdownPage {
    /// A link's target as written, and the line it is on (from 1).
    struct Link: Equatable {
        var target: String
        var line: Int
    }

    /// The page's headings (`#` to `######`), as text, in order.
    let headings: [String]
    /// Every inline link, image and reference definition outside code.
    let links: [Link]

    init(_ text: String) {
        var headings: [String] = []
        var links: [Link] = []
        var fence: Substring?  // the fence that opened the code block we are in
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop(while: { $0 == " " })
            if let open = fence {
                if trimmed.hasPrefix(open) && trimmed.drop(while: { $0 == open.first }).allSatisfy(\.isWhitespace) { fence = nil }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fence = trimmed.prefix(while: { $0 == trimmed.first })
                continue
            }
            if let heading = Self.heading(String(line)) { headings.append(heading) }
            links += Self.targets(in: Self.removingCodeSpans(String(line))).map { Link(target: $0, line: index + 1) }
        }
        self.headings = headings
        self.links = links
    }

    /// The anchors GitHub gives the headings: each heading's slug, and a
    /// repeated slug with `-1`, `-2`, … after it.
    var anchors: Set<String> {
        var seen: [String: Int] = [:]
        var anchors = Set<String>()
        for heading in headings {
            let slug = Self.slug(heading)
            let count = seen[slug, default: 0]
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
            seen[slug] = count + 1
        }
        return anchors
    }

    /// GitHub's anchor for a heading: its text as rendered (links as their
    /// text, no emphasis), lower case, every character but letters, marks,
    /// digits, `_`, `-` and spaces dropped, each space a `-`.
    static func slug(_ heading: String) -> String {
        let rendered = heading.replacing(/!?\[([^\]]*)\]\([^)]*\)/) { $0.output.1 }
        return String(String.UnicodeScalarView(rendered.lowercased().unicodeScalars.compactMap { scalar in
            if scalar == " " { return "-" }
            if scalar == "-" || scalar == "_" { return scalar }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
                 .connectorPunctuation:
                return scalar
            default:
                return nil
            }
        }))
    }

    /// An ATX heading's text as rendered (`## Text ##` gives `Text`; code spans
    /// and emphasis lose their marks), or nil.
    static func heading(_ line: String) -> String? {
        guard line.hasPrefix("#"), let match = line.wholeMatch(of: /#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*/) else { return nil }
        return String(match.output.1).replacing("*", with: "").replacing("`", with: "")
    }

    /// The targets of the line's inline links and images, `[text](target "title")`,
    /// and of a reference definition, `[label]: target`.
    static func targets(in line: String) -> [String] {
        if let definition = line.wholeMatch(of: /\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?.*/) {
            return [String(definition.output.1)]
        }
        return line.matches(of: /\]\(<?([^)\s>]*)>?(?:\s+"[^"]*")?\)/).map { String($0.output.1) }
    }

    /// The line with its code spans (`` `…` ``, of any number of backticks) taken out.
    static func removingCodeSpans(_ line: String) -> String {
        line.replacing(/(`+)(?:.*?)\1/, with: "")
    }
}

/// The repository's Markdown: README.md and docs/*.md, each read once.
struct Documentation {
    /// The pages by path from the repository's root (`docs/sync.md`).
    let pages: [String: MarkdownPage]
    let root: URL

    init(root: URL) throws {
        self.root = root
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var pages: [String: MarkdownPage] = [:]
        for path in ["README.md"] + docs {
            pages[path] = MarkdownPage(try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
        self.pages = pages
    }

    /// What is wrong with each relative link of the pages, one line each
    /// (`docs/sync.md:12: format.md#nope: no heading of docs/format.md has the anchor nope`).
    func brokenLinks() -> [String] {
        pages.keys.sorted().flatMap { path in
            pages[path]!.links.compactMap { link in
                problem(with: link.target, from: path).map { "\(path):\(link.line): \(link.target): \($0)" }
            }
        }
    }

    /// Why a link from the page at `path` does not resolve, or nil when it does (or leaves the repository).
    func problem(with target: String, from path: String) -> String? {
        if target.contains(/^[a-zA-Z][a-zA-Z0-9+.-]*:/) { return nil }  // https:, mailto:: not a file of ours
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let file = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let folder = (path as NSString).deletingLastPathComponent
        let resolved = file.isEmpty ? path : Self.normalized((folder as NSString).appendingPathComponent(file))
        if resolved.hasPrefix("../") { return "leaves the repository" }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent(resolved).path, isDirectory: &isFolder) else {
            return "no such file as \(resolved)"
        }
        guard parts.count == 2 else { return nil }
        let anchor = String(parts[1]).removingPercentEncoding ?? String(parts[1])
        guard let page = pages[resolved] else {
            return isFolder.boolValue || !resolved.hasSuffix(".md") ? "an anchor into \(resolved), which is not a page" : "\(resolved) is not one of the pages checked"
        }
        return page.anchors.contains(anchor) ? nil : "no heading of \(resolved) has the anchor \(anchor)"
    }

    /// The headings of a page, for citations such as `docs/sync.md § Conflicts`.
    func headings(of path: String) -> [String]? { pages[path]?.headings }

    /// `a/./b/../c` as `a/c`.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", let last = parts.last, last != ".." { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }
}
