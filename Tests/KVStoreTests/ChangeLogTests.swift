import Foundation
import Testing
@testable import KVStore

/// docs/format.md § Change log: `.kvfs/changes.log` survives remounts and
/// is capped in size, the oldest lines going first.
@Suite("The change log")
struct ChangeLogTests {
    /// The log's lines, each parsed as the JSON object it must be.
    func lines(_ log: ChangeLog) throws -> [[String: Any]] {
        try String(decoding: log.contents(), as: UTF8.self).split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON line: \(line)")
        }
    }

    @Test("past its cap the log keeps its newest whole lines, and a reopened log numbers on from the last")
    func cappedOldestFirstAndSurvivesReopening() throws {
        let folder = TemporaryFolder("kvfs-changelog")
        defer { folder.cleanup() }
        let path = folder.sub("changes.log").path
        let capacity = 4096
        let log = ChangeLog(path: path, capacity: capacity)
        for n in 1...200 {
            log.append(StoreChange(reason: .serverChange, keys: ["key\(n)"]))
            #expect(log.contents().count <= capacity, "over the cap after \(n) lines")
        }
        let kept = try lines(log)
        let sequences = kept.compactMap { $0["seq"] as? Int }
        #expect(sequences.count == kept.count)
        #expect(sequences.last == 200, "the newest line stays")
        #expect(sequences.first.map { $0 > 1 } == true, "the oldest lines went")
        #expect(sequences == Array((sequences.first ?? 0)...200), "what is kept is one unbroken run of the newest lines")
        #expect(log.contents().count > capacity / 4, "no more than the oldest half went")

        let reopened = ChangeLog(path: path, capacity: capacity)
        reopened.append(StoreChange(reason: .quotaViolationChange, keys: ["big"]))
        let last = try #require(try lines(reopened).last)
        #expect(last["seq"] as? Int == 201 && last["reason"] as? String == "QuotaViolationChange" && last["keys"] as? [String] == ["big"])
    }
}
