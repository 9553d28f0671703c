import Foundation

/// How long, and how much, a store's history keeps: a store setting, the
/// same on every device (docs/history.md).
///
/// A version that is not a key's current value is kept while it is younger
/// than `days` and within the newest-first budget of `bytes`
/// (`RetentionRule`); a key's current value is always kept. Either limit
/// at 0 turns history off: only current values (and the removals the
/// tombstone rule still needs) stay.
public struct HistoryRetention: Codable, Equatable, Sendable, CustomStringConvertible {
    /// How many days a version is kept.
    public var days: Int
    /// How many bytes of versions (`RetentionRule/charge(key:value:base:rank:)`
    /// each: their records' bytes on disk) the store keeps, newest first.
    public var bytes: Int

    /// A retention of `days` days and `bytes` bytes.
    public init(days: Int, bytes: Int) {
        self.days = days
        self.bytes = bytes
    }

    /// The default: 30 days, 8 MiB.
    public static let standard = HistoryRetention(days: 30, bytes: 8 << 20)
    /// History off.
    public static let off = HistoryRetention(days: 0, bytes: 0)
    /// The largest `days` accepted: a year of 100 centuries, far past any use, within a stamp's range.
    public static let maximumDays = 3_650_000

    /// The largest `bytes` accepted, 128 MiB: a device's snapshot holds up
    /// to that much history (`RetentionRule`), which every device reads
    /// back whole, and whose versions it indexes in memory (`HistoryIndex`,
    /// about 70 bytes each). A setting past it is refused; one read from a
    /// folder (an older version allowed any) counts as this much, on every device alike.
    public static let maximumBytes = 128 << 20

    /// Whether history is off: only current values are kept.
    public var isOff: Bool { days == 0 || bytes == 0 }

    /// `30 days, 8388608 bytes`, or `off`.
    public var description: String { isOff ? "off" : "\(days) days, \(bytes) bytes" }

    /// Throws unless both limits are between 0 and their maximum.
    public func validated() throws(KVStoreError) -> HistoryRetention {
        guard (0...Self.maximumDays).contains(days) else {
            throw .invalidRetention(reason: "days must be 0 to \(Self.maximumDays) (0 turns history off)")
        }
        guard (0...Self.maximumBytes).contains(bytes) else {
            throw .invalidRetention(reason: """
                bytes must be 0 to \(Self.maximumBytes) (128 MiB: every device reads a snapshot of that much history \
                back and indexes it in memory; 0 turns history off)
                """)
        }
        return self
    }
}

/// A retention as one device set it: `retention.json` in that device's own
/// folder, `{"bytes":8388608,"days":30,"stamp":"<packed stamp>"}`. Each
/// device writes only its own folder, so the store's setting is the one
/// with the greatest stamp (time, then the folder's device) across the
/// folders: a last-writer-wins register that every device reads alike.
struct RetentionSetting: Equatable, Sendable {
    static let fileName = "retention.json"

    var retention: HistoryRetention
    /// When it was set, and by which device (the folder it is in).
    var stamp: Stamp

    /// The file's fields. `device` is the stamp's device when it is not the
    /// folder's: a setting an adopter kept of a retired device (``Adoption``).
    private struct Document: Codable {
        var days: Int, bytes: Int, stamp: HLCTimestamp, device: String?
    }

    /// The file's content, in the folder of `folder`.
    func json(in folder: DeviceID) -> [UInt8] {
        let document = Document(days: retention.days, bytes: retention.bytes, stamp: stamp.time,
                                device: stamp.device == folder ? nil : stamp.device.hex)
        return JSONDocument.sorted(document) + [0x0A]
    }

    /// The setting a file in `folder` holds, or nil when it holds none readable.
    init?(json bytes: some Sequence<UInt8>, in folder: DeviceID) {
        guard let document = JSONDocument.decoded(Document.self, from: bytes),
              let retention = try? HistoryRetention(days: document.days, bytes: min(document.bytes, HistoryRetention.maximumBytes)).validated()
        else { return nil }
        let device = document.device.map { DeviceID(hex: $0) } ?? folder
        guard let device else { return nil }
        self.init(retention: retention, stamp: Stamp(time: document.stamp, device: device))
    }

    init(retention: HistoryRetention, stamp: Stamp) {
        self.retention = retention
        self.stamp = stamp
    }
}

extension SyncDirectory {
    /// The setting `device`'s folder holds, if any.
    func retentionSetting(of device: DeviceID) -> RetentionSetting? {
        let folder = folder(of: device)
        return folder.readSigned(RetentionSetting.fileName, in: try? folder.open()).flatMap { RetentionSetting(json: $0, in: device) }
    }

    /// Writes a setting into this device's folder.
    func publish(_ setting: RetentionSetting, of device: DeviceID) throws(KVStoreError) {
        try folder(of: device).writeSigned(RetentionSetting.fileName, setting.json(in: device))
    }

    /// The store's setting: the one with the greatest stamp among `devices`' folders, if any says one.
    func retentionSetting(among devices: some Sequence<DeviceID>) -> RetentionSetting? {
        devices.compactMap(retentionSetting(of:)).max { $0.stamp < $1.stamp }
    }
}
