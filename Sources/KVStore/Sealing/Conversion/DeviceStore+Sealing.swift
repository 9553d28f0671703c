import Foundation

/// Sealing a store that holds values (docs/sealed.md § Converting a store), as the engine sees it:
/// before the roster is written, this device adopts the other devices' records; once it is,
/// each member's own plain records are sealed as it opens the store
/// (``JournalWriter/sealPlainRecords(of:device:claim:files:clock:warn:)``); and a plain device
/// still running meanwhile writes nothing more once it sees the roster.
extension DeviceStore {
    /// Adopts every other device's records that still count, with the history the retention keeps, into
    /// this device's folder (as `kvfs retire` does), and removes their plain folders: what `kvfs seal` does
    /// before it writes the roster, so that this folder, sealed next, holds every value of the store.
    ///
    /// A device that looks alive (a mount of it runs: it has not closed its store, and its folder changed
    /// lately) or whose folder has not fully arrived is refused, as retiring it is; with `force`, its
    /// records that are here are adopted all the same, and its folder is left (``RetiredDevice/folderLeft``
    /// says why): it may hold more, which the device seals itself once it joins.
    func adoptEveryDeviceForSealing(force: Bool) throws(KVStoreError) -> [RetiredDevice] {
        refresh()
        var adopted: [RetiredDevice] = []
        for device in sync.devices() where device != deviceID {
            do throws(KVStoreError) {
                _ = try engine.withLock { state throws(KVStoreError) in try state.checkRetirable(device, force: false) }
            } catch {
                guard force, case let .retireRefused(label, reason) = error else { throw error }
                guard let kept = adopt(device, retired: false) else {
                    throw .io(path: sync.folder(of: deviceID).path, reason: "cannot write the snapshot that keeps \(label)'s records")
                }
                adopted.append(RetiredDevice(id: device, name: name(of: device), values: kept.values, removals: kept.removals,
                                             keptIn: sync.folder(of: deviceID).path, folderLeft: reason))
                continue
            }
            adopted.append(try retire(device, force: true))
        }
        return adopted
    }

    /// Stops writing when the store this plain device has open was sealed meanwhile (`kvfs seal` on
    /// another machine): it is no member, so its writes are refused from now on (``KVStoreError/notMember(path:)``),
    /// the status and the log say so, and what it wrote before it saw the roster stays in its folder, for it
    /// to seal once it has joined. Returns whether it has stopped so: it then reads no folder either, since
    /// it could open none of the sealed ones. One `fstatat` while the store is not sealed.
    func stopWritingIfSealed() -> Bool {
        guard sync.sealing == nil, !isReadOnly else { return false }
        switch journal.folder.withLock({ $0.writer.stoppedBecause }) {
        case .notMember?: return true
        case nil: break
        default: return false
        }
        guard ((try? sync.rootFolder()) ?? nil)?.entry(RosterFolder.name) != nil, Membership.isSealed(syncDirectory: syncDirectory) else {
            return false
        }
        if journal.folder.withLock({ $0.writer.stop(.notMember(path: sync.path)) }) {
            context.warn("""
                the store at \(sync.path) was sealed (its roster/ holds a version) and this device is no member: it writes \
                and reads nothing more; join it (kvfs pair on a member, kvfs join here) and mount it again, and its own \
                records are sealed then
                """)
        }
        return true
    }
}

extension EngineState {
    /// What the status says of sealing: this device writing no more (the store was sealed and it is no
    /// member, or a copy of its state directory took its folder), and the roster's files and the signed files refused.
    var sealingWarnings: [SyncWarning] {
        var warnings: [SyncWarning] = []
        let (stoppedBecause, ownPath) = own.withLock { ($0.writer.stoppedBecause, $0.writer.folder.path) }
        if let stopped = stoppedBecause {
            let fix = if case .notMember = stopped { "join the store: kvfs pair on a member, kvfs join here; then mount it again" }
                      else { "unmount this one, and give each copy of the state directory its own (a new device)" }
            warnings.append(SyncWarning(kind: .notWriting, device: deviceID.hex, file: ownPath,
                                        message: "this device writes nothing more: \(stopped)", fix: fix))
        }
        for refusal in sync.sealing?.rosterRefusals ?? [] {
            warnings.append(SyncWarning(kind: .refused, device: nil, file: sync.path + "/" + RosterFolder.name + "/" + refusal.file,
                                        message: Self.rosterRefusalMessage(refusal, in: sync.path),
                                        fix: "a writer without a member's key put it there, or a device that is no member: delete it"))
        }
        for refusal in sync.sealing?.signedFiles.refusals ?? [] {
            let device = URL(fileURLWithPath: refusal.path).deletingLastPathComponent().lastPathComponent
            warnings.append(SyncWarning(kind: .refused, device: device, file: refusal.path, message: refusal.description,
                                        fix: "a writer without the device's key put it there, or put back an older copy; it is ignored and the copy read before stands: delete it (its device writes the file again when it next changes)"))
        }
        return warnings + supersededKeyWarnings
    }

    /// The log's and the status's line for a roster file refused.
    static func rosterRefusalMessage(_ refusal: RosterRefusal, in syncPath: String) -> String {
        "\(syncPath)/\(RosterFolder.name)/\(refusal.file): refused: \(refusal.reason); the roster stays at the version this device trusts"
    }
}
