/// A file beside the records in a sealed store's device folder (`writer.json`, `device.json`,
/// `progress.json`, `waiting.json`, `adopted.json`, `retention.json`): its content sealed under the
/// store key of an epoch and signed by the folder's device, with a sequence number that only grows
/// (docs/sealed.md § Signed files). A writer without keys can delete one, but not forge, alter, move or
/// replay one: a reader refuses what does not open with the folder's device's key, and a sequence
/// lower than one it has read from that file before.
///
/// Its bytes, little-endian:
///
/// | field | size |
/// |---|---|
/// | mark `KVSIGNED` | 8 |
/// | format (1) | 1 |
/// | epoch whose store key seals it | 4 |
/// | sequence | 8 |
/// | nonce | 12 |
/// | the content sealed with ChaCha20-Poly1305, its tag after it | content + 16 |
/// | Ed25519 signature, by the folder's device, of the binding and every byte before it | 64 |
///
/// The binding (``binding(file:device:storeID:)``) names the store, the device and the file, so a
/// file copied to another name, folder or store fails its signature. This type reads the form alone
/// (no cryptography: the fuzz target compiles it by itself); `SignedFile+Sealing.swift` seals and opens.
struct SignedFile: Sendable, Equatable {
    let epoch: UInt32
    let sequence: UInt64
    let nonce: [UInt8]
    /// The sealed content and its tag.
    let sealed: [UInt8]
    let signature: [UInt8]
    /// Every byte before the signature, as in the file.
    let signedBytes: [UInt8]

    static let mark = Array("KVSIGNED".utf8)
    static let format: UInt8 = 1
    static let nonceSize = 12
    static let tagSize = 16
    static let signatureSize = 64
    /// Mark, format, epoch, sequence and nonce.
    static let headerSize = 8 + 1 + 4 + 8 + nonceSize
    /// What a signed file takes beside its content.
    static let overhead = headerSize + tagSize + signatureSize

    /// Whether `bytes` start as a signed file does (a plain store's JSON never does).
    static func looksSigned(_ bytes: [UInt8]) -> Bool { bytes.starts(with: mark) }

    /// The file `bytes` hold, or nil when they are not one of this format; checks the form only. Its readers
    /// read at most a small file's size (`SyncDirectory.smallFileLimit`), which bounds the work.
    static func decode(_ bytes: [UInt8]) -> SignedFile? {
        guard bytes.count >= overhead else { return nil }
        return bytes.withUnsafeBytes { buffer -> SignedFile? in
            var reader = ByteReader(buffer)
            guard let mark = reader.raw(8), Array(mark) == Self.mark, reader.u8() == format,
                  let epoch = reader.u32(), epoch >= 1, let sequence = reader.u64(),
                  let nonce = reader.raw(nonceSize).map(Array.init),
                  let sealed = reader.raw(bytes.count - overhead + tagSize).map(Array.init),
                  let signature = reader.raw(signatureSize).map(Array.init), reader.isAtEnd else { return nil }
            return SignedFile(epoch: epoch, sequence: sequence, nonce: nonce, sealed: sealed, signature: signature,
                              signedBytes: Array(bytes[..<(bytes.count - signatureSize)]))
        }
    }

    /// The file's bytes.
    var bytes: [UInt8] { signedBytes + signature }

    /// The bytes before the signature, for fields that are not signed yet.
    static func unsigned(epoch: UInt32, sequence: UInt64, nonce: [UInt8], sealed: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize + sealed.count + signatureSize)
        writer.raw(mark)
        writer.u8(format)
        writer.u32(epoch)
        writer.u64(sequence)
        writer.raw(nonce)
        writer.raw(sealed)
        return writer.bytes
    }

    /// What the signature and the seal are bound to: the store, the device whose folder holds the file, and its name.
    static func binding(file: String, device: DeviceID, storeID: String) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(Array("kvfs signed file 1".utf8))
        writer.string(storeID)
        writer.raw(device.bytes)
        writer.string(file)
        return writer.bytes
    }
}
