import Foundation

/// A wait on a kvfs mount that ends as soon as the mount says it never will:
/// its `.kvfs/status` (docs/files.md) reports a refused record, whose folder
/// it then never reads (docs/sealed.md § Refusals), or the mount no longer
/// answers at all. A benchmark mounting a 10⁶-record journal waits up to an
/// hour; without this, a refused record or a dead daemon made it wait that
/// hour for values that could not come.
public enum MountStatus {
    /// How often ``waitUntil(seconds:_:through:_:)`` reads the status: seldom enough that making the
    /// document weighs nothing on what a benchmark times, often enough that a refusal ends the wait at once.
    public static let looks = 0.5

    /// Why a wait on a mount ended before its condition held.
    public struct Ended: Error, CustomStringConvertible {
        /// What was waited for, and why it ended.
        public var description: String
    }

    /// The messages of the refusals the status document `json` reports (its warnings of kind `refused`),
    /// or nil when `json` is no status document.
    public static func refusals(in json: Data) -> [String]? {
        guard let status = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
              let warnings = status["warnings"] as? [[String: Any]] else { return nil }
        return warnings.filter { $0["kind"] as? String == "refused" }.map { $0["message"] as? String ?? "" }
    }

    /// Looks every 10 ms until `condition` holds, for `seconds` at most (then throws ``TimedOut``); and
    /// every ``looks`` seconds reads the status of the mount at `mount`, throwing ``Ended`` at the first
    /// refusal it reports, or when it cannot be read.
    public static func waitUntil(seconds: Double, _ what: String, through mount: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var nextLook = Date()
        while !condition() {
            if Date() >= nextLook {
                nextLook = Date().addingTimeInterval(looks)
                guard let json = FileManager.default.contents(atPath: mount + "/.kvfs/status"), let refusals = refusals(in: json) else {
                    throw Ended(description: "gave up waiting for \(what): the mount at \(mount) no longer answers (its .kvfs/status cannot be read)")
                }
                if let refusal = refusals.first {
                    throw Ended(description: "gave up waiting for \(what): the mount at \(mount) refused records: \(refusal)")
                }
            }
            guard Date() < deadline else { throw TimedOut(description: "waited \(Int(seconds)) s for \(what)") }
            usleep(10_000)
        }
    }
}
