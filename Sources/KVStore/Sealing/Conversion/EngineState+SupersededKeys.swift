import Foundation

/// Records sealed with a superseded key (docs/sealed.md § Superseded keys): a device the new roster had
/// not reached went on sealing under the old epoch, whose key the devices revoked since still hold.
extension EngineState {
    /// Every use of a superseded key among the folders read, this device's own included.
    var supersededKeyUses: [SupersededKeyUse] {
        guard sync.sealing != nil else { return [] }
        var folders = self.folders.readers.mapValues(\.sealedUnder)
        folders[deviceID] = own.withLock { $0.reader.sealedUnder }.merging(ownSealedUnder)
        return SupersededKeyUse.find(in: folders)
    }

    /// Logs each use of a superseded key once, as a reading finds it.
    mutating func noteSupersededKeys() {
        let uses = supersededKeyUses
        for use in uses where !supersededLogged.contains(use) {
            let warning = supersededKeyWarning(use)
            context.warn(warning.message + "; " + warning.fix)
        }
        supersededLogged = uses
    }

    /// The status's warnings of the uses of a superseded key.
    var supersededKeyWarnings: [SyncWarning] { supersededKeyUses.map(supersededKeyWarning) }

    private func supersededKeyWarning(_ use: SupersededKeyUse) -> SyncWarning {
        let readers = sync.sealing?.keys.revokedReaders[use.epoch] ?? []
        let open = readers.isEmpty ? "no device revoked since holds its key"
            : "\(readers.sorted().joined(separator: ", ")) (revoked since) \(readers.count == 1 ? "holds" : "hold") its key and can read them"
        let span = "stamped up to \(use.latest), after epoch \(use.newer) began at \(use.began)"
        if use.device == deviceID {
            return SyncWarning(kind: .supersededKey, device: deviceID.hex, file: sync.folder(of: deviceID).path,
                               message: "this device sealed writes under epoch \(use.epoch), \(span): the roster had not reached it; \(open)",
                               fix: "nothing to do now: it seals under epoch \(use.newer) since; its next compaction seals those writes again under the current key (copies made before, a backup or a synchronizer's old versions, keep the old seal)")
        }
        return SyncWarning(kind: .supersededKey, device: use.device.hex, file: sync.folder(of: use.device).path,
                           message: "\(sync.sealing?.keys.memberNames[use.device] ?? folders.names[use.device] ?? "a device") (\(use.device.hex.prefix(8))) sealed records under epoch \(use.epoch), \(span): the roster had not reached it; \(open)",
                           fix: "bring roster/ to that device (check its synchronizer): it seals under the current key once it reads it, and its next compaction seals those records again")
    }
}
