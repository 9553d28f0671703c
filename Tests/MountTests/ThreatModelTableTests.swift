import Foundation
import Testing
import TestSupport

/// Issue 38 item 7: docs/threat-model.md § Every file of the folder names every file and folder a sealed
/// store's sync directory holds. A session of every command that writes there (seal, pair and join, two
/// mounts writing, a retention set, a wait, a retirement with revocation) leaves its folder, and each path
/// in it must match a row of the table: a file a later change adds fails here until the table says who
/// writes it, how it is authenticated, what a writer without keys can do to it and what it tells a reader.
@Suite("The threat model's table names every file of a sealed store", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ThreatModelTableTests {
    /// The paths the table's first column names, as patterns: `<id>` and the like stand for one name.
    static func tablePatterns() throws -> [NSRegularExpression] {
        let text = try String(contentsOfFile: Repository.path("docs/threat-model.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Every file of the folder").dropFirst().first)
            .components(separatedBy: "\n## ")[0]
        var patterns: [NSRegularExpression] = []
        for row in section.split(separator: "\n") where row.hasPrefix("| `") {
            let first = row.dropFirst(2).prefix { $0 != "|" }
            for (index, part) in first.split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                let path = String(part).hasSuffix("/") ? String(part.dropLast()) : String(part)
                let escaped = NSRegularExpression.escapedPattern(for: path)
                    .replacingOccurrences(of: #"<[a-z]+>"#, with: "[^/]+", options: .regularExpression)
                patterns.append(try NSRegularExpression(pattern: "^" + escaped + "$"))
            }
        }
        return patterns
    }

    @Test("the table parses into the paths it names")
    func tableParses() throws {
        let patterns = try Self.tablePatterns()
        #expect(patterns.count >= 16)
        func named(_ path: String) -> Bool {
            patterns.contains { $0.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil }
        }
        #expect(named("devices/0123456789abcdef0123456789abcdef/journal-0000000000000001.log"))
        #expect(named("roster/version-0000000000000002-0123456789abcdef0123456789abcdef"))
        #expect(!named("devices/0123456789abcdef0123456789abcdef/planted.json"))
        #expect(!named("devices/x/y/z"))
    }

    @Test("after a sealed session of every command, each path in the sync directory is a row of the table")
    func everyFileIsNamed() throws {
        let patterns = try Self.tablePatterns()
        try withSandbox(.plain) { sandbox in  // sealed here, by device a
            try SealedAttackTests.pairedMounts(sandbox)
            try sandbox.ok("""
                kvfs retention --days 40 --sync-dir $SYNC --state-dir $T/s-a
                for v in 1 2 3; do echo v$v > $T/ma/k; done; rm $T/ma/ka1
                kvfs wait k --timeout 5 --sync-dir $SYNC --state-dir $T/s-a
                kvfs unmount $T/mb
                kvfs retire $(cat $T/s-b/device-id) --force --revoke --sync-dir $SYNC --state-dir $T/s-a
                echo after > $T/ma/k; kvfs unmount $T/ma
                """, timeout: 120)
            let paths = try sandbox.ok("find $SYNC -mindepth 1 -printf '%P\\n' | sort").split(separator: "\n").map(String.init)
            #expect(paths.contains { $0.hasSuffix("/retention.json") } && paths.contains { $0.hasSuffix("/adopted.json") }
                    && paths.contains { $0.hasPrefix("roster/version-") }, "the session wrote what the table is about: \(paths)")
            for path in paths {
                #expect(patterns.contains { $0.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil },
                        "docs/threat-model.md § Every file of the folder does not name \(path)")
            }
        }
    }
}
