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
    /// command names the store with `storeOptions` (`--store ID`, …).
    init(_ lostWrite: LostWrite, name: (DeviceID) -> String, storeOptions: [String]) {
        key = lostWrite.key
        func side(_ stamp: Stamp) -> Side {
            Side(device: name(stamp.device), id: stamp.device.hex, time: Self.millisecondText(stamp.time))
        }
        (lost, winner) = (side(lostWrite.lost), side(lostWrite.winner))
        let version = lost.time + "@" + FileName.encode(StoreKey(lost.device))  // a device name escaped as a key's file name is
        restore = (["kvfs", "restore", key.string, version] + storeOptions).map(Self.shellWord).joined(separator: " ")
    }

    /// `2026-11-26T11:05:43.123Z`: a stamp's time in UTC, always to the millisecond, as version names give it.
    static func millisecondText(_ time: HLCTimestamp) -> String {
        let (seconds, milliseconds) = time.milliseconds.quotientAndRemainder(dividingBy: 1000)
        let second = DateText.format(Date(timeIntervalSince1970: Double(seconds)), precision: .seconds).dropLast()  // its Z
        return second + "." + String(String(milliseconds + 1000).dropFirst()) + "Z"
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
