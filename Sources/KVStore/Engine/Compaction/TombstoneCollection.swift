/// When a device may drop one of its tombstones from the snapshot it writes.
///
/// A device compacts only its own folder: it writes a snapshot of its records
/// that still win their key (under a temporary name, then renamed), starts a
/// new segment, and removes the older files. Its records beaten by another
/// device's newer record are always left out (the newer record stands for
/// them). One of its tombstones — key `k` removed at stamp `s`, or adopted
/// from another device (``Adoption``) at stamp `s` — is left out only when,
/// for every other device known — with a folder in the sync directory, or
/// whose folder vanished (it may come back), but not a retired one:
///
/// 1. that device has published progress (`progress.json`) saying it has read
///    this device's folder up to `s` or later, so it has applied the removal,
///    but not past this device's latest stamp: a device that read records
///    of this one stamped too far ahead, which this one has since rewritten
///    stamped earlier (``OwnRecordsAhead``), claims a position its stamps
///    no longer measure until it has read the rewritten folder;
/// 2. this device has read that device's records up to the latest stamp the
///    same progress names for its own writes, so nothing that device wrote
///    before it read the removal is still unknown here; and
/// 3. that device's newest record for `k`, as read here, is not a value:
///    any older value it held for `k` is gone from its files, so no one can
///    ever read it again.
///
/// A device without published progress (one that never ran to the end of
/// opening, or whose file has not arrived) holds every tombstone back; so does
/// a device that has been away: it keeps its old values until it returns,
/// reads the removals, and compacts.
///
/// Why this converges whatever happens: every device's store is the merge of
/// the records now in the device folders it has read (``MergedState``), so
/// once all devices have read the same files they show the same store, with
/// or without a given tombstone. The rule decides only *which* store: with
/// (1)–(3), no value older than a dropped tombstone is left in or can come
/// back into a folder that was known, so the store is the one that keeping
/// every tombstone would give. Only a device whose folder was unknown when
/// the tombstone went (a new machine whose folder had not arrived yet) can
/// bring back an older value for `k`, and then every device shows it alike.
enum TombstoneCollection {
    /// What this device knows of another one.
    struct Peer {
        /// Its published progress, if any.
        var progress: ReadProgress?
        /// How far this device has read its records without a gap.
        var readUpTo: HLCTimestamp?
        /// Its newest record for each key, as read here.
        var newest: [StoreKey: Version]
    }

    /// The keys among `tombstones` (in this device's folder, each with the
    /// stamp up to which a peer must have read the folder to hold it) that
    /// may be dropped; `latest` is the device's latest stamp.
    static func collectable(_ tombstones: [(key: StoreKey, readFrom: HLCTimestamp)], of device: DeviceID,
                            latest: HLCTimestamp?, peers: [Peer]) -> Set<StoreKey> {
        guard peers.allSatisfy(hasBeenReadUpToItsProgress) else { return [] }
        return Set(tombstones.filter { key, readFrom in
            peers.allSatisfy { peer in
                guard let read = peer.progress?.read[device], read >= readFrom, latest.map({ read <= $0 }) ?? true
                else { return false }
                return peer.newest[key]?.value == nil
            }
        }.map(\.key))
    }

    /// Rule 2: this device has read the peer as far as its progress speaks for.
    private static func hasBeenReadUpToItsProgress(_ peer: Peer) -> Bool {
        guard let progress = peer.progress else { return false }
        guard let own = progress.own else { return true }
        return peer.readUpTo.map { $0 >= own } ?? false
    }
}
