import Foundation
import Testing
import TestSupport

/// The README and docs/ are read on GitHub and in a clone: every relative
/// link and `#anchor` in them resolves (anchors as GitHub makes them from
/// headings), every `docs/PAGE.md § Heading` that code and pages cite names
/// a heading that is there, docs/README.md lists every page, and nothing
/// cites the material outside the repository (the repository stands alone).
@Suite("Documentation links")
struct LinkTests {
    static let root = URL(fileURLWithPath: Repository.root)

    @Test("every relative link and #anchor in README.md and docs/*.md resolves")
    func linksResolve() throws {
        let documentation = try Documentation(root: Self.root)
        #expect(documentation.pages.count > 1)
        #expect(documentation.brokenLinks() == [])
    }

    @Test("every `docs/PAGE.md § Heading`, `README § Heading` and `README's \"Heading\"` cited in code, scripts and pages names a heading of that page")
    func citationsResolve() throws {
        let documentation = try Documentation(root: Self.root)
        var broken: [String] = []
        var count = 0
        // This file's own examples are not citations.
        for (path, text) in try Self.sources() where !path.hasPrefix("Tests/DocsTests/") && text.contains("§") {
            for citation in Citations.find(in: text) {
                count += 1
                guard let headings = documentation.headings(of: citation.page) else {
                    broken.append("\(path): \(citation.page) § \(citation.rest.prefix(40)): no such page")
                    continue
                }
                if !headings.contains(where: { Citations.cites($0, citation.rest) }) {
                    broken.append("\(path): \(citation.page) § \(citation.rest.prefix(40)): no such heading")
                }
            }
        }
        #expect(count > 10)
        #expect(broken == [])
    }

    @Test("docs/README.md, the index, links every page of docs/")
    func indexListsEveryPage() throws {
        let documentation = try Documentation(root: Self.root)
        let listed = Set(documentation.pages["docs/README.md"]!.links.map { $0.target.split(separator: "#").first.map(String.init) ?? "" })
        let pages = documentation.pages.keys.filter { $0.hasPrefix("docs/") && $0 != "docs/README.md" }.map { String($0.dropFirst(5)) }
        #expect(pages.filter { !listed.contains($0) }.sorted() == [])
    }

    @Test("nothing in the repository cites the shared folder outside it")
    func nothingCitesOutside() throws {
        let outside = ".." + "/shared"  // spelt in two so that this file does not cite it either
        let citing = try Self.sources().filter { $0.text.contains(outside) }.map(\.path)
        #expect(citing == [])
    }

    @Test("the README's Quick start is the two commands for a fresh machine, and CI runs the second")
    func quickStart() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.firstMatch(of: /\n## Quick start\n(?s:(.*?))\n##[ ]/)?.output.1)
        let block = try #require(section.firstMatch(of: /```sh\n(?s:(.*?))```/)?.output.1)
        let commands = block.split(separator: "\n").map { $0.split(separator: "#").first?.trimmingCharacters(in: .whitespaces) ?? "" }
        #expect(commands == ["mount-scripts/quickstart.sh", "mount-scripts/run-tests.sh"])
        let ci = try String(contentsOf: Self.root.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.split(separator: "\n").contains("mount-scripts/run-tests.sh"))
    }

    @Test("the checker finds a missing file, a missing anchor and a missing heading, and takes GitHub's anchors")
    func checkerFailsOnBrokenLinks() throws {
        let page = MarkdownPage("""
            # Café `au lait` & *milk*
            ## Café au lait & milk
            See [that](#café-au-lait--milk), [again](#café-au-lait--milk-1), `[not a link](#nowhere)` and [web](https://example.com).
            ```
            [in code](#nowhere)
            ```
            [ref]: other.md#x
            """)
        #expect(page.anchors == ["café-au-lait--milk", "café-au-lait--milk-1"])
        #expect(page.links.map(\.target) == ["#café-au-lait--milk", "#café-au-lait--milk-1", "https://example.com", "other.md#x"])
        let documentation = try Documentation(root: Self.root)
        #expect(documentation.problem(with: "docs/nope.md", from: "README.md") == "no such file as docs/nope.md")
        #expect(documentation.problem(with: "sync.md#nope", from: "docs/format.md") == "no heading of docs/sync.md has the anchor nope")
        #expect(documentation.problem(with: "sync.md#conflicts", from: "docs/format.md") == nil)
        #expect(documentation.problem(with: "../Package.swift", from: "docs/format.md") == nil)
        #expect(Citations.find(in: "/// docs/sync.md § Conflicts): a\n/// README § Values and\n    /// their files")
                    .map { "\($0.page) § \($0.rest.prefix(22))" } == ["docs/sync.md § Conflicts): a README §", "README.md § Values and their files"])
        #expect(Citations.find(in: "the README's \"Values and their files\" rules").map(\.page) == ["README.md"])
        #expect(Citations.cites("Conflicts", "Conflicts): a"))
        #expect(!Citations.cites("Health", "Healthy"))
        #expect(Citations.cites("kvfs wait", "`kvfs wait`): two"))
    }

    /// The text files of the repository that cite pages: sources, tests, scripts, CI and the pages themselves.
    static func sources() throws -> [(path: String, text: String)] {
        let skipped = ["Tests/Fuzz/corpus", "Tests/Fuzz/crashers", "Tests/Fuzz/samples"]
        var files: [(String, String)] = []
        for top in ["Sources", "Tests", "mount-scripts", "docs", ".ci", "README.md", "Package.swift"] {
            let url = root.appendingPathComponent(top)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { continue }
            let paths = isFolder.boolValue ? (FileManager.default.subpaths(atPath: url.path) ?? []).map { top + "/" + $0 } : [top]
            for path in paths where !skipped.contains(where: { path.hasPrefix($0) }) {
                if let text = try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) { files.append((path, text)) }
            }
        }
        return files
    }
}

/// Citations of a page's section, `docs/sync.md § Conflicts`, `README § History`
/// or `README's "History"`, across comment lines.
enum Citations {
    /// A page (`docs/sync.md`, `README.md`) and the text after its `§`.
    struct Citation {
        var page: String
        var rest: Substring
    }

    static func find(in text: String) -> [Citation] {
        // One line: a comment's or a paragraph's lines joined, their markers (`///`, `//`, `#`, `-`) dropped.
        let joined = text.replacing(/[ \t]*\n[ \t]*(?:\/\/\/?|#|\*|-)?[ \t]*/, with: " ")
        return joined.matches(of: /(?:docs\/)?([A-Za-z-]+\.md|README)[`"']?(?:'s)?\s+(?:§\s+|")/).map { match in
            let name = String(match.output.1)
            return Citation(page: name == "README" ? "README.md" : "docs/" + name, rest: joined[match.range.upperBound...].prefix(120))
        }
    }

    /// Whether the text after a `§` starts with the heading, the heading ending there.
    static func cites(_ heading: String, _ rest: Substring) -> Bool {
        let text = rest.replacing("`", with: "")
        guard text.hasPrefix(heading) else { return false }
        let next = text.dropFirst(heading.count).first
        return next.map { !$0.isLetter && !$0.isNumber } ?? true
    }
}
