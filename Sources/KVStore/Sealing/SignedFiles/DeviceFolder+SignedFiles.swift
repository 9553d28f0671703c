/// The files beside a device folder's records (``SignedFile``): read and written as they are in a plain
/// store, sealed and signed in a sealed one (docs/sealed.md § Signed files). Every reader and writer of
/// those files goes through here.
extension DeviceFolder {
    /// The content of `file` in this folder (`folder`, opened; nil when it is not there), or nil when it is not
    /// there, is too large (refused, sealed), or (sealed) is refused and no good copy was read before
    /// (``SignedFileLedger``). At most one byte past a small file's size is read.
    func readSigned(_ file: String, in folder: Folder?) -> [UInt8]? {
        let bytes = folder.flatMap { try? $0.read(file, limit: SyncDirectory.smallFileLimit + 1) }
        guard sealing != nil else { return bytes.flatMap { $0.count <= SyncDirectory.smallFileLimit ? $0 : nil } }
        return opened(file, bytes: bytes)
    }

    /// The content of `file`, whose bytes were read as `bytes` (nil: it is not there). A refused file reads as
    /// the last good copy read, when `orLastTaken`; else as nothing (its writer then writes it anew). One of
    /// ``SignedFile/lasting`` that is gone reads as the last good copy read too.
    func opened(_ file: String, bytes: [UInt8]?, orLastTaken: Bool = true) -> [UInt8]? {
        guard let sealing else { return bytes }
        guard let device = DeviceID(hex: name) else { return nil }
        let keys = sealing.keys
        return sealing.signedFiles.take(bytes, key: name + "/" + file, path: path + "/" + file, orLastTaken: orLastTaken,
                                        standsWhenGone: SignedFile.lasting.contains(file)) { bytes in
            SignedFile.open(bytes, file: file, device: device, keys: keys)
        }
    }

    /// The bytes to write as `file` of this folder for `content`: `content` itself in a plain store.
    func signed(_ file: String, _ content: [UInt8]) throws(KVStoreError) -> [UInt8] {
        guard let sealing else { return content }
        let keys = sealing.keys
        precondition(keys.device.hex == name, "a device signs the files of its own folder only")
        let key = name + "/" + file
        let sequence = sealing.signedFiles.nextSequence(key)
        let bytes = try SignedFile.seal(content, file: file, keys: keys, sequence: sequence)
        sealing.signedFiles.wrote(bytes, content: content, sequence: sequence, key: key)
        return bytes
    }

    /// Writes `file` of this folder (`folder`, opened) to hold `content`, atomically.
    func writeSigned(_ file: String, _ content: [UInt8], into folder: Folder) throws(KVStoreError) {
        try folder.writeAtomically(file, signed(file, content))
    }

    /// Signs the files of this device's own folder that it wrote plain before the store was sealed, as its
    /// plain records are sealed: once, as it first opens the store sealed. Its retention setting and adoptions
    /// stay as they were; the others go, and are written anew as the device runs (its name as the roster gives it).
    func signPlainFiles() throws(KVStoreError) {
        guard sealing != nil, let folder = try open() else { return }
        for file in SignedFile.names {
            guard let content = unsealed.readSigned(file, in: folder), !SignedFile.looksSigned(content) else { continue }
            if SignedFile.lasting.contains(file) { try writeSigned(file, content, into: folder) } else { folder.remove(file) }
        }
    }

    /// Writes `file` of this folder to hold `content`, creating the folder when it is not there.
    func writeSigned(_ file: String, _ content: [UInt8]) throws(KVStoreError) {
        guard let folder = try open(create: true) else { return }
        try writeSigned(file, content, into: folder)
    }
}
