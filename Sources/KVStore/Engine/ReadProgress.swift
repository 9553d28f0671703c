import Foundation

/// What a device publishes in its folder (`progress.json`) about how far it
/// has read the others, so that they know when a tombstone of theirs can go
/// (``TombstoneCollection``).
///
/// `{"own":"<stamp>","read":{"<device id>":"<stamp>",...}}`, stamps as the
/// decimal form of their 64-bit packed value (JSON numbers lose precision).
struct ReadProgress: Equatable, Sendable {
    static let fileName = "progress.json"

    /// The device's latest own stamp when it published: its folder held all
    /// its records up to here.
    var own: HLCTimestamp?
    /// Per other device, the stamp up to which this one had read that
    /// device's records without a gap.
    var read: [DeviceID: HLCTimestamp]

    init(own: HLCTimestamp?, read: [DeviceID: HLCTimestamp]) {
        self.own = own
        self.read = read
    }

    /// The progress a file holds, or nil when it is not a progress document.
    init?(json text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let read = object["read"] as? [String: String] else { return nil }
        own = (object["own"] as? String).flatMap(Self.stamp)
        self.read = [:]
        for (hex, text) in read {
            guard let device = DeviceID(hex: hex), let stamp = Self.stamp(text) else { return nil }
            self.read[device] = stamp
        }
    }

    /// The file's content.
    func json() -> String {
        var object: [String: Any] = ["read": Dictionary(uniqueKeysWithValues: read.map { ($0.key.hex, String($0.value.rawValue)) })]
        if let own { object["own"] = String(own.rawValue) }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func stamp(_ text: String) -> HLCTimestamp? { UInt64(text).map(HLCTimestamp.init(rawValue:)) }
}
