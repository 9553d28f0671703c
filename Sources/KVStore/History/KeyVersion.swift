import Foundation

/// One version of a key, as the store's history keeps it (docs/history.md):
/// a value or a removal, who wrote it and when, and whether it is the key's
/// current one.
///
/// `kvfs history` prints one line per version, `.kvfs/history/KEYFILE/`
/// shows one file per version named ``name``, and the library's
/// `history(forKey:)` returns them oldest first; `restore(_:forKey:)` writes
/// one again as a new version.
public struct KeyVersion: Sendable, Equatable {
    /// The key.
    public let key: StoreKey
    /// Its stamp: the writer's clock and device. Versions are ordered by it.
    public let stamp: Stamp
    /// The name of the device that wrote it.
    public let deviceName: String
    /// Whether it removed the key.
    public let isRemoval: Bool
    /// Its value's size in bytes, as its file shows it (0 for a removal).
    public let size: Int
    /// Whether it is the key's current version (the one that wins it).
    public let isCurrent: Bool
    /// Its name, unique among the key's versions: `2026-11-26T11:05:43.123Z@laptop`,
    /// `~2` after it when an earlier version has the same, and `.removed` for a removal.
    public let name: String
    /// The value, when it was read (the library's `history(forKey:)` reads
    /// it; listings do not); nil for a removal.
    public var value: PropertyListValue?
    /// Whether this version lost to a concurrent write from a device that
    /// had not seen it: filled by conflict detection.
    public var lost = false
    /// The names of the devices that have read this version (the current
    /// one): filled by delivery; nil when not known.
    public var deliveredTo: [String]?

    /// When it was written, by its writer's clock.
    public var date: Date { stamp.time.date }
    /// The device that wrote it.
    public var deviceID: DeviceID { stamp.device }

    /// A version from its parts.
    public init(key: StoreKey, stamp: Stamp, deviceName: String, isRemoval: Bool, size: Int, isCurrent: Bool, name: String,
                value: PropertyListValue? = nil) {
        self.key = key
        self.stamp = stamp
        self.deviceName = deviceName
        self.isRemoval = isRemoval
        self.size = size
        self.isCurrent = isCurrent
        self.name = name
        self.value = value
    }
}

/// How versions are named in `.kvfs/history/KEYFILE/` and by `kvfs history`
/// and `kvfs restore`.
public enum VersionName {
    /// `2026-11-26T11:05:43.123Z@laptop`: the writer's time in UTC to the
    /// millisecond and its device name, escaped as a key's file name is
    /// (`/` as `%2F`); `.removed` after it for a removal. When two versions
    /// of one key would get the same name (the same millisecond, the same
    /// device name, the same kind), each after the first, in stamp order,
    /// gets `~2`, `~3`, … before `.removed`.
    ///
    /// - Parameter versions: a key's versions, oldest first: their times, device names and kinds.
    public static func names(of versions: [(time: HLCTimestamp, deviceName: String, isRemoval: Bool)]) -> [String] {
        var seen: [String: Int] = [:]
        return versions.map { version in
            let base = timeText(version.time) + "@" + FileName.encode(StoreKey(version.deviceName))
            let kind = version.isRemoval ? removedSuffix : ""
            let count = (seen[base + kind] ?? 0) + 1
            seen[base + kind] = count
            return base + (count == 1 ? "" : "~\(count)") + kind
        }
    }

    /// What a removal's name ends with.
    public static let removedSuffix = ".removed"

    /// `2026-11-26T11:05:43.123Z`: always to the millisecond, so names sort as times do.
    public static func timeText(_ time: HLCTimestamp) -> String {
        let milliseconds = time.milliseconds
        let days = Int64(milliseconds / 86_400_000), inDay = Int(milliseconds % 86_400_000)
        let (year, month, day) = civil(days)
        func digits(_ value: Int, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(inDay / 3_600_000, 2)):"
            + "\(digits(inDay / 60_000 % 60, 2)):\(digits(inDay / 1000 % 60, 2)).\(digits(inDay % 1000, 3))Z"
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`):
    /// one formatter per name would cost a listing of 10,000 versions most of its time.
    private static func civil(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }
}
