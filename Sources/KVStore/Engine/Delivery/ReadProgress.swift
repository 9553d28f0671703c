import Foundation

/// What a device publishes in its folder (`progress.json`) about how far it
/// has read the others, so that they know when a tombstone of theirs can go
/// (``TombstoneCollection``).
///
/// `{"own":"<stamp>","read":{"<device id>":"<stamp>",...},"at":"<stamp>","closed":true}`,
/// stamps as the decimal form of their 64-bit packed value (JSON numbers
/// lose precision); `at` is when it was published (a device publishes at
/// least every half minute while it runs: a heartbeat), `closed` only once
/// the device has closed the store.
struct ReadProgress: Equatable, Sendable {
    static let fileName = "progress.json"

    /// The device's latest own stamp when it published: its folder held all
    /// its records up to here.
    var own: HLCTimestamp?
    /// Per other device this one knows, the stamp up to which it had read
    /// that device's records without a gap (``nothing`` before any).
    var read: [DeviceID: HLCTimestamp]
    /// What `read` says of a device known but not read yet.
    static let nothing = HLCTimestamp(rawValue: 0)
    /// Whether the device closed the store after publishing (a clean stop, not a crash or a running device).
    var closed = false
    /// When it was published, by the device's clock.
    var at: HLCTimestamp?

    init(own: HLCTimestamp?, read: [DeviceID: HLCTimestamp], closed: Bool = false, at: HLCTimestamp? = nil) {
        self.own = own
        self.read = read
        self.closed = closed
        self.at = at
    }

    /// The progress a file holds, or nil when it is not a progress document.
    init?(json text: String) {
        guard let document = JSONDocument.decoded(Document.self, from: text.utf8) else { return nil }
        own = document.own.flatMap(Self.stamp)
        closed = document.closed ?? false
        at = document.at.flatMap(Self.stamp)
        read = [:]
        for (hex, text) in document.read {
            guard let device = DeviceID(hex: hex), let stamp = Self.stamp(text) else { return nil }
            read[device] = stamp
        }
    }

    /// The file's content.
    func json() -> String {
        let document = Document(read: Dictionary(uniqueKeysWithValues: read.map { ($0.key.hex, String($0.value.rawValue)) }),
                                own: own.map { String($0.rawValue) }, closed: closed ? true : nil, at: at.map { String($0.rawValue) })
        return String(decoding: JSONDocument.sorted(document), as: UTF8.self) + "\n"
    }

    /// The file's fields; those that are nil are left out.
    private struct Document: Codable {
        var read: [String: String], own: String?, closed: Bool?, at: String?

        init(read: [String: String], own: String?, closed: Bool?, at: String?) {
            (self.read, self.own, self.closed, self.at) = (read, own, closed, at)
        }

        /// `read` is required; another field of another type counts as missing, as it always has.
        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            read = try fields.decode([String: String].self, forKey: .read)
            own = try? fields.decode(String.self, forKey: .own)
            closed = try? fields.decode(Bool.self, forKey: .closed)
            at = try? fields.decode(String.self, forKey: .at)
        }
    }

    private static func stamp(_ text: String) -> HLCTimestamp? { UInt64(text).map(HLCTimestamp.init(rawValue:)) }
}
