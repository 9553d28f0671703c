import Foundation

/// One member of a sealed store, as a roster version lists it.
struct RosterMember: Sendable, Equatable {
    /// A device writes records; the recovery key only signs roster versions and opens the store key.
    enum Role: UInt8, Sendable {
        case device = 1
        case recovery = 2
    }

    let role: Role
    let id: DeviceID
    /// Its name when it was added, for messages (its folder's `device.json` says its name today).
    let name: String
    /// Its Ed25519 public key (32 bytes).
    let signingKey: [UInt8]
    /// Its X25519 public key (32 bytes).
    let agreementKey: [UInt8]
    /// The version's store key wrapped for it (``KeyWrap``).
    let wrappedKey: [UInt8]
}

/// One version of a sealed store's roster: who the members are, the epoch
/// and its store key wrapped for each of them, the earlier epochs' keys
/// sealed under it, signed by a member of the version before it
/// (docs/sealed.md § Roster, docs/sealed.md § Roster).
///
/// Its bytes, little-endian, all lengths bounded (``Limits``):
///
/// | field | size |
/// |---|---|
/// | mark `KVROSTER` | 8 |
/// | format (1) | 1 |
/// | store id | 1-byte length + UTF-8 |
/// | number (the genesis is 1) | 8 |
/// | previous version's SHA-256 (zeros for the genesis) | 32 |
/// | epoch (from 1) | 4 |
/// | member count | 2 |
/// | each member: role (1 device, 2 recovery), id (16), name (1-byte length + UTF-8), signing key (32), agreement key (32), wrapped store key (92) | |
/// | earlier epochs' keys sealed under this one (nonce, 32 per epoch before this one, tag) | 2-byte length + bytes |
/// | signer's id | 16 |
/// | Ed25519 signature of `kvfs roster 1` and every byte before it | 64 |
struct RosterVersion: Sendable, Equatable {
    let storeID: String
    let number: UInt64
    let previous: [UInt8]
    let epoch: UInt32
    let members: [RosterMember]
    let earlier: [UInt8]
    let signer: DeviceID
    let signature: [UInt8]
    /// The encoded version, as in its file.
    let bytes: [UInt8]

    /// What a decoder accepts at most: a roster is small, so anything bigger is hostile.
    enum Limits {
        /// A key wrap's bytes (``KeyWrap``).
        static let wrapBytes = 32 + 12 + 32 + 16
        static let members = 256
        static let nameBytes = 64
        static let storeIDBytes = 64
        /// Each revocation adds one epoch (32 bytes of earlier keys).
        static let epochs: UInt32 = 1024
        /// A whole version: the members and the earlier keys at their limits, with room to spare.
        static let bytes = 8 + 1 + 65 + 8 + 32 + 4 + 2 + members * (1 + 16 + 65 + 32 + 32 + wrapBytes)
            + 2 + 28 + 32 * Int(epochs) + 16 + 64
    }

    private static let mark = Array("KVROSTER".utf8)

    var deviceMembers: [RosterMember] { members.filter { $0.role == .device } }
    var recoveryMember: RosterMember? { members.first { $0.role == .recovery } }
    func member(_ id: DeviceID) -> RosterMember? { members.first { $0.id == id } }

    /// `name` cut to whole characters within a roster's name limit (a device name has at most 64
    /// characters, which may take more bytes).
    static func clipped(_ name: String) -> String {
        var name = name
        while name.utf8.count > Limits.nameBytes { name.removeLast() }
        return name
    }

    /// The bytes of a version before its signature.
    static func unsigned(storeID: String, number: UInt64, previous: [UInt8], epoch: UInt32, members: [RosterMember],
                         earlier: [UInt8], signer: DeviceID) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(mark)
        writer.u8(1)
        writer.u8(UInt8(clamping: storeID.utf8.count))
        writer.raw(storeID.utf8)
        writer.u64(number)
        writer.raw(previous)
        writer.u32(epoch)
        writer.u16(UInt16(clamping: members.count))
        for member in members {
            writer.u8(member.role.rawValue)
            writer.raw(member.id.bytes)
            writer.u8(UInt8(clamping: member.name.utf8.count))
            writer.raw(member.name.utf8)
            writer.raw(member.signingKey)
            writer.raw(member.agreementKey)
            writer.raw(member.wrappedKey)
        }
        writer.u16(UInt16(clamping: earlier.count))
        writer.raw(earlier)
        writer.raw(signer.bytes)
        return writer.bytes
    }

    /// This version's bytes made again from its fields (the fuzz target's round trip).
    var reencoded: [UInt8] {
        Self.unsigned(storeID: storeID, number: number, previous: previous, epoch: epoch, members: members, earlier: earlier,
                      signer: signer) + signature
    }

    /// The version `bytes` hold, or nil when they are not exactly one well-formed version within ``Limits``.
    /// Checks the form only (it needs no cryptography, so the fuzz target compiles it alone): whether it
    /// was signed by a member of the version before it is ``refusal(after:)``'s.
    static func decode(_ bytes: [UInt8]) -> RosterVersion? {
        guard bytes.count <= Limits.bytes else { return nil }
        return bytes.withUnsafeBytes { buffer -> RosterVersion? in
            var reader = ByteReader(buffer)
            guard let markBytes = reader.raw(8), Array(markBytes) == mark, reader.u8() == 1,
                  let storeID = shortString(&reader, limit: Limits.storeIDBytes), !storeID.isEmpty,
                  let number = reader.u64(), number >= 1,
                  let previous = reader.raw(32).map(Array.init),
                  let epoch = reader.u32(), (1...Limits.epochs).contains(epoch),
                  let count = reader.u16(), (1...Limits.members).contains(Int(count)) else { return nil }
            var members: [RosterMember] = []
            for _ in 0..<count {
                guard let member = decodeMember(&reader) else { return nil }
                members.append(member)
            }
            guard let earlierCount = reader.u16(), let earlier = reader.raw(Int(earlierCount)).map(Array.init),
                  earlier.count == (epoch == 1 ? 0 : 28 + 32 * Int(epoch - 1)),
                  let signer = reader.raw(16).map({ DeviceID(bytes: Array($0)) }),
                  let signature = reader.raw(64).map(Array.init), reader.isAtEnd,
                  Set(members.map(\.id)).count == members.count,
                  members.filter({ $0.role == .recovery }).count == 1,
                  (number == 1) == (previous == [UInt8](repeating: 0, count: 32)) else { return nil }
            return RosterVersion(storeID: storeID, number: number, previous: previous, epoch: epoch, members: members,
                                 earlier: earlier, signer: signer, signature: signature, bytes: bytes)
        }
    }

    private static func decodeMember(_ reader: inout ByteReader) -> RosterMember? {
        guard let role = reader.u8().flatMap(RosterMember.Role.init(rawValue:)),
              let id = reader.raw(16).map({ DeviceID(bytes: Array($0)) }),
              let name = shortString(&reader, limit: Limits.nameBytes),
              let signingKey = reader.raw(32).map(Array.init),
              let agreementKey = reader.raw(32).map(Array.init),
              let wrappedKey = reader.raw(Limits.wrapBytes).map(Array.init) else { return nil }
        return RosterMember(role: role, id: id, name: name, signingKey: signingKey, agreementKey: agreementKey, wrappedKey: wrappedKey)
    }

    /// A string of at most `limit` UTF-8 bytes, after a one-byte length, with no control characters.
    private static func shortString(_ reader: inout ByteReader, limit: Int) -> String? {
        guard let length = reader.u8(), Int(length) <= limit, let raw = reader.raw(Int(length)),
              let text = String(validating: raw, as: UTF8.self),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        return text
    }
}
