import Foundation

/// What a device's folder keeps of another device that was retired or whose
/// folder vanished, published in its folder as `adopted.json`:
/// `{"<device id>": {"upTo": "<stamp>", "generation": 5, "at": "<stamp>", "retired": true, "name": "laptop"}}`,
/// stamps as the decimal form of their 64-bit packed value.
///
/// The adopter copies, into its own next snapshot and with their original
/// stamps, every record of the other device that still wins and no other
/// folder holds; so the values and removals that device won stay in the
/// store when its folder goes. For a retired device, every reader then
/// ignores the records its own folder holds up to `upTo` (should that folder
/// still be there, or come back): they are adopted, or beaten, and a
/// tombstone that beat one may since have been collected, as nobody waits
/// for a retired device. Readers apply a retirement once they have read the
/// adopter's snapshot `generation`, which holds the copies, so they never
/// ignore a record before its copy arrives. A device whose folder merely
/// vanished is not filtered (it may come back, still writing); it stays a
/// device every other one waits for, until someone retires it.
struct Adoption: Codable, Equatable, Sendable {
    static let fileName = "adopted.json"

    /// How far the adopter had read the other device's folder without a gap
    /// (nil when it had read nothing): the records up to here are adopted or beaten.
    var upTo: HLCTimestamp?
    /// The adopter's snapshot that first holds the copies (0: no copies were needed).
    var generation: UInt64
    /// The adopter's stamp when it adopted: a device that has read the
    /// adopter's folder this far holds the copies (``TombstoneCollection``).
    var at: HLCTimestamp
    /// Whether someone retired the device (`kvfs retire`), rather than its folder vanishing.
    var retired: Bool
    /// Its name, for the status once its folder is gone.
    var name: String?

    /// One adoption of the same device after another: the later of each.
    func merged(with later: Adoption) -> Adoption {
        Adoption(upTo: [upTo, later.upTo].compactMap { $0 }.max(), generation: max(generation, later.generation),
                 at: max(at, later.at), retired: retired || later.retired, name: later.name ?? name)
    }
}

extension HLCTimestamp: Codable {
    /// Decodes the decimal form of the packed value (JSON numbers lose precision).
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let raw = UInt64(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a stamp: \(text)"))
        }
        self.init(rawValue: raw)
    }

    /// Encodes the decimal form of the packed value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(rawValue))
    }
}

extension SyncDirectory {
    /// What a device's folder says it adopted; empty when it says nothing
    /// (or nothing readable). A name that may not be shown is dropped (``DeviceName``).
    func adoptions(of device: DeviceID) -> [DeviceID: Adoption] {
        let folder = folder(of: device)
        guard let bytes = folder.readSigned(Adoption.fileName, in: try? folder.open()),
              let entries = JSONDocument.decoded([String: Adoption].self, from: bytes) else { return [:] }
        return Dictionary(entries.compactMap { hex, adoption in
            var adoption = adoption
            adoption.name = DeviceName.shown(adoption.name)
            return DeviceID(hex: hex).map { ($0, adoption) }
        }) { first, _ in first }
    }

    /// The device that retired `device` (`kvfs retire`), and the name it was
    /// retired under; nil when no folder says anyone did.
    func retirement(of device: DeviceID) -> (by: DeviceID, name: String?)? {
        for other in devices() where other != device {
            if let adoption = adoptions(of: other)[device], adoption.retired { return (other, adoption.name) }
        }
        return nil
    }

    /// Publishes what this device's folder adopted.
    func publish(_ adoptions: [DeviceID: Adoption], of device: DeviceID) throws(KVStoreError) {
        let entries = Dictionary(uniqueKeysWithValues: adoptions.map { ($0.key.hex, $0.value) })
        try folder(of: device).writeSigned(Adoption.fileName, JSONDocument.sorted(entries) + [0x0A])
    }

    /// Removes a retired device's folder: its files, then the folder itself
    /// (a link is removed, never followed).
    func removeFolder(of device: DeviceID) throws(KVStoreError) {
        if let folder = try folder(of: device).open() {
            for name in folder.names() { folder.remove(name) }
        }
        try rootFolder()?.folder("devices")?.removeFolder(device.hex)
    }
}
