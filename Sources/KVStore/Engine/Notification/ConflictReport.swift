import Foundation

/// The change-log line of a conflict (docs/sync.md § Conflicts): this
/// device's value of a key was replaced by another device's concurrent
/// write, and `kvfs restore` brings it back.
///
/// `{"seq":42,"time":"…","reason":"Conflict","code":0,"keys":["theme"],`
/// `"lost":{"device":"laptop","id":"…","time":"2026-11-26T11:05:43.123Z"},`
/// `"winner":{"device":"desktop","id":"…","time":"2026-11-26T11:05:43.456Z"},`
/// `"restore":"kvfs restore theme 2026-11-26T11:05:43.123Z@laptop"}`: a line
/// of the log's shape (Apple tells of such a change as a ServerChange, whose
/// code it keeps), with the two versions and the command.
struct ConflictReport: Sendable, Equatable {
    /// The change log's name for a conflict.
    static let reason = "Conflict"

    /// One of the two versions: who wrote it, and when.
    struct Side: Codable, Sendable, Equatable {
        var device: String
        var id: String
        var time: String
    }

    let key: StoreKey
    /// This device's value that lost.
    let lost: Side
    /// The other device's version that replaced it.
    let winner: Side
    /// The command that writes the lost value again.
    let restore: String

    /// The report of `lostWrite`, the devices named by `name`; the restore
    /// command names the lost version `version` (as history names it), else
    /// by its time and device name, and the store with `storeOptions` (`--store ID`, …).
    init(_ lostWrite: LostWrite, version: String? = nil, name: (DeviceID) -> String, storeOptions: [String]) {
        key = lostWrite.key
        func side(_ stamp: Stamp) -> Side {
            Side(device: name(stamp.device), id: stamp.device.hex, time: VersionName.timeText(stamp.time))
        }
        (lost, winner) = (side(lostWrite.lost), side(lostWrite.winner))
        let version = version ?? VersionName.names(of: [(lostWrite.lost.time, lost.device, false)])[0]
        restore = (["kvfs", "restore", key.string, version] + storeOptions).map(Self.shellWord).joined(separator: " ")
    }

    /// `word` as a shell reads it back: as it is when it holds only characters
    /// no shell treats specially, else in single quotes.
    static func shellWord(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "@%+=:,./_-".unicodeScalars.contains(scalar))
        }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
