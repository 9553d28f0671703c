import Foundation

// The pairing messages' bytes, which need no cryptography (so the fuzz target compiles them alone);
// their MACs are PairingCode.swift's.

/// What the new machine writes to `pairing/<name>.request`: its id, name and public keys, MACed with the code.
///
/// Bytes: `KVPAIRRQ`, format 1, the store id (1-byte length + UTF-8), the
/// device id (16), its name (1-byte length + UTF-8), its signing key (32), its
/// agreement key (32), HMAC-SHA256 of all before it (32).
struct PairingRequest: Equatable {
    let storeID: String
    let device: DeviceID
    let name: String
    let signingKey: [UInt8]
    let agreementKey: [UInt8]

    static let mark = Array("KVPAIRRQ".utf8)

    /// Its bytes before the MAC.
    var unsigned: [UInt8] {
        var writer = PairingWire.start(Self.mark, storeID: storeID)
        writer.raw(device.bytes)
        PairingWire.short(name, into: &writer)
        writer.raw(signingKey)
        writer.raw(agreementKey)
        return writer.bytes
    }

    /// The request `bytes` hold before their MAC (unchecked), or nil when they are not one well-formed request.
    static func parse(_ bytes: [UInt8]) -> PairingRequest? {
        PairingWire.parsed(bytes, mark: mark) { reader, storeID in
            guard let device = reader.raw(16).map({ DeviceID(bytes: Array($0)) }),
                  let name = PairingWire.short(&reader), !name.isEmpty,
                  let signingKey = reader.raw(32).map(Array.init),
                  let agreementKey = reader.raw(32).map(Array.init) else { return nil }
            return PairingRequest(storeID: storeID, device: device, name: name, signingKey: signingKey, agreementKey: agreementKey)
        }
    }
}

/// What the member writes to `pairing/<name>.accept` once it has added the new machine: the roster version
/// that adds it, by number and hash, MACed with the code.
///
/// Bytes: `KVPAIRAC`, format 1, the store id (1-byte length + UTF-8), the new
/// device's id (16), the version's number (8) and SHA-256 (32), HMAC-SHA256 of all before it (32).
struct PairingAccept: Equatable {
    let storeID: String
    let device: DeviceID
    let number: UInt64
    let hash: [UInt8]

    static let mark = Array("KVPAIRAC".utf8)

    /// Its bytes before the MAC.
    var unsigned: [UInt8] {
        var writer = PairingWire.start(Self.mark, storeID: storeID)
        writer.raw(device.bytes)
        writer.u64(number)
        writer.raw(hash)
        return writer.bytes
    }

    /// The accept `bytes` hold before their MAC (unchecked), or nil when they are not one well-formed accept.
    static func parse(_ bytes: [UInt8]) -> PairingAccept? {
        PairingWire.parsed(bytes, mark: mark) { reader, storeID in
            guard let device = reader.raw(16).map({ DeviceID(bytes: Array($0)) }), let number = reader.u64(),
                  let hash = reader.raw(32).map(Array.init) else { return nil }
            return PairingAccept(storeID: storeID, device: device, number: number, hash: hash)
        }
    }
}

/// The framing both pairing messages share: mark, format, store id, fields, MAC.
enum PairingWire {
    /// The most bytes a pairing message has (a request with the longest store id and name).
    static let limit = 8 + 1 + 65 + 16 + 65 + 64 + 32

    static func start(_ mark: [UInt8], storeID: String) -> ByteWriter {
        var writer = ByteWriter()
        writer.raw(mark)
        writer.u8(1)
        short(storeID, into: &writer)
        return writer
    }

    static func short(_ text: String, into writer: inout ByteWriter) {
        let bytes = Array(RosterVersion.clipped(text).utf8)
        writer.u8(UInt8(bytes.count))
        writer.raw(bytes)
    }

    static func short(_ reader: inout ByteReader) -> String? {
        guard let length = reader.u8(), Int(length) <= RosterVersion.Limits.nameBytes, let raw = reader.raw(Int(length)),
              let text = String(validating: raw, as: UTF8.self),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        return text
    }

    /// What `fields` reads between the store id and the MAC (unchecked), when the mark is `mark` and nothing is left over.
    static func parsed<T>(_ bytes: [UInt8], mark: [UInt8], fields: (inout ByteReader, String) -> T?) -> T? {
        guard bytes.count <= limit, bytes.count > 32 else { return nil }
        return bytes.dropLast(32).withUnsafeBytes { buffer -> T? in
            var reader = ByteReader(buffer)
            guard let got = reader.raw(8), Array(got) == mark, reader.u8() == 1, let storeID = short(&reader),
                  let value = fields(&reader, storeID), reader.isAtEnd else { return nil }
            return value
        }
    }
}

