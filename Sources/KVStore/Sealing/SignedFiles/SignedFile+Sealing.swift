import Crypto
import Foundation

/// Why a signed file was not taken: what the status and the log say of it.
struct SignedFileRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path.
    let path: String
    let reason: String
    var description: String { "\(path): refused: \(reason)" }
}

extension SignedFile {
    /// Every file beside the records of a device folder; in a sealed store each is a signed file.
    static let names = [WriterClaim.fileName, SyncDirectory.nameFile, ReadProgress.fileName, WaitSignal.fileName,
                        Adoption.fileName, RetentionSetting.fileName]
    /// Those the engine reads only when it needs them (the others each survey of the folders reads as they change).
    static let readWhenNeeded = [WriterClaim.fileName, Adoption.fileName, RetentionSetting.fileName]
    /// Those a device sets once and keeps, whose loss would cost values or history: a copy a reader took
    /// stands when the file goes (deleting one is withholding it), and a device keeps what they say when its
    /// store is sealed. The others it writes anew as it runs (its name, `device.json`, is then the one the
    /// roster gives it, unless `--device-name` gives another).
    static let lasting = [Adoption.fileName, RetentionSetting.fileName]

    /// Why a file is no signed file that this device takes.
    struct Unopened: Error {
        let reason: String
        /// Whether its folder's device is no member: its records are refused and named, its files need not be.
        var isNoMember = false
        init(_ reason: String) { self.reason = reason }
    }

    /// A signed file's content, and the sequence and epoch it was written with.
    struct Opened: Sendable, Equatable {
        let content: [UInt8]
        let sequence: UInt64
        let epoch: UInt32
    }

    /// The bytes of the file `file` of this device's folder holding `content`: sealed under the current
    /// epoch's key and signed with this device's key, numbered `sequence`.
    static func seal(_ content: [UInt8], file: String, keys: SealingKeys, sequence: UInt64) throws(KVStoreError) -> [UInt8] {
        guard let storeKey = keys.storeKey(epoch: keys.currentEpoch) else {
            throw .io(path: file, reason: "this device holds no key of the store's epoch \(keys.currentEpoch)")
        }
        guard content.count <= SyncDirectory.smallFileLimit - overhead else {
            throw .io(path: file, reason: "\(content.count) bytes are more than a signed file holds")
        }
        let binding = binding(file: file, device: keys.device, storeID: keys.storeID)
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<nonceSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let header = unsigned(epoch: keys.currentEpoch, sequence: sequence, nonce: nonce, sealed: [])
        do {
            let box = try ChaChaPoly.seal(content, using: contentKey(storeKey), nonce: ChaChaPoly.Nonce(data: nonce),
                                          authenticating: binding + header)
            let signedBytes = header + Array(box.ciphertext) + Array(box.tag)
            return signedBytes + Array(try keys.signingKey.signature(for: binding + signedBytes))
        } catch {
            throw .io(path: file, reason: "cannot seal it: \(error)")
        }
    }

    /// What the file `file` of `device`'s folder, holding `bytes`, says; or why it is refused: not a signed
    /// file, not a member's, not signed by that member for that file, or sealed under an epoch this device
    /// has no key of. The sequence is the caller's to compare (``SignedFileLedger``).
    static func open(_ bytes: [UInt8], file: String, device: DeviceID, keys: SealingKeys) -> Result<Opened, Unopened> {
        guard bytes.count <= SyncDirectory.smallFileLimit else {
            return .failure(Unopened("it is larger than a signed file can be (\(SyncDirectory.smallFileLimit) bytes)"))
        }
        guard let signed = decode(bytes) else {
            return .failure(Unopened(looksSigned(bytes) ? "it is no signed file of this format" : "it is not signed, and a sealed store takes only signed files"))
        }
        guard let member = keys.verifyingKey(of: device) else {
            var unopened = Unopened("its device is no member of the roster")
            unopened.isNoMember = true
            return .failure(unopened)
        }
        let binding = binding(file: file, device: device, storeID: keys.storeID)
        guard member.isValidSignature(signed.signature, for: binding + signed.signedBytes) else {
            return .failure(Unopened("its signature does not check: forged, altered, or moved from another file, folder or store"))
        }
        guard let storeKey = keys.storeKey(epoch: signed.epoch) else {
            return .failure(Unopened("it is sealed under epoch \(signed.epoch), whose key this device does not hold"))
        }
        let header = Array(signed.signedBytes[..<headerSize])
        guard let nonce = try? ChaChaPoly.Nonce(data: signed.nonce),
              let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: signed.sealed.dropLast(tagSize), tag: signed.sealed.suffix(tagSize)),
              let content = try? ChaChaPoly.open(box, using: contentKey(storeKey), authenticating: binding + header) else {
            return .failure(Unopened("it does not open with the store key of its epoch"))
        }
        return .success(Opened(content: Array(content), sequence: signed.sequence, epoch: signed.epoch))
    }

    /// The key a signed file's content is sealed with: the epoch's store key, derived apart from the records' keys.
    private static func contentKey(_ storeKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: storeKey, info: Array("kvfs signed file key 1".utf8), outputByteCount: 32)
    }
}
