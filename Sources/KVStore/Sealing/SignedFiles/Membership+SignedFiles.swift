import Foundation

extension Membership {
    /// The content of a file of the store's sync directory as this device reads it: in a sealed store, a file
    /// beside a device folder's records (`devices/<id>/progress.json` and the others: a signed file, docs/sealed.md
    /// § Signed files) opened and checked with this device's keys; any other file as it is. What `kvfs inspect`
    /// prints, so that `jq` reads a sealed store's files as it reads a plain one's. One file alone: whether it is
    /// a replay of an older copy is for the store's readers, which remember what they took (`kvfs status` names it).
    ///
    /// - Throws: ``MembershipError`` when the file cannot be read, is too large for such a file, or is a signed
    ///   file this device refuses (forged, altered, moved, or sealed under an epoch it has no key of), or this
    ///   device is no member of the sealed store.
    public func readableContent(ofFileAt path: String) throws(MembershipError) -> [UInt8] {
        let url = URL(fileURLWithPath: path)
        let bytes: [UInt8]?
        do { bytes = try Folder.open(url.deletingLastPathComponent().path)?.read(url.lastPathComponent, limit: SyncDirectory.smallFileLimit + 1) } catch {
            throw MembershipError(error)
        }
        guard let bytes else { throw MembershipError("\(path) does not exist") }
        let device = DeviceID(hex: url.deletingLastPathComponent().lastPathComponent)
        // In a sealed store a device folder's JSON files are signed files: a plain one there is refused, as the store refuses it.
        let mustBeSigned = device != nil && SignedFile.names.contains(url.lastPathComponent) && storeIsSealed
        guard SignedFile.looksSigned(bytes) || mustBeSigned else { return bytes }
        guard let device else { throw MembershipError("\(path) is a signed file outside a device's folder (devices/<id>/)") }
        switch SignedFile.open(bytes, file: url.lastPathComponent, device: device, keys: try keys()) {
        case let .success(opened): return opened.content
        case let .failure(unopened): throw MembershipError("\(path): refused: \(unopened.reason)")
        }
    }
}
