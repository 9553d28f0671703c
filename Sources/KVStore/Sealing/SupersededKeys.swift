/// The stamps of one device's records, first and last, by the epoch each was sealed under: what shows a
/// device that sealed with an epoch's key after a later epoch began (docs/sealed.md § Superseded keys).
struct SealedEpochs: Sendable, Equatable {
    private(set) var spans: [UInt32: ClosedRange<HLCTimestamp>] = [:]

    /// Notes a record stamped `stamp` sealed under `epoch`.
    mutating func note(_ epoch: UInt32, _ stamp: HLCTimestamp) {
        spans[epoch] = spans[epoch].map { min($0.lowerBound, stamp)...max($0.upperBound, stamp) } ?? stamp...stamp
    }

    /// What both note.
    func merging(_ other: SealedEpochs) -> SealedEpochs {
        var merged = self
        for (epoch, span) in other.spans {
            merged.note(epoch, span.lowerBound)
            merged.note(epoch, span.upperBound)
        }
        return merged
    }
}

/// A device that sealed records under an epoch's key after a later epoch had begun: a device the new
/// roster had not reached (`roster/` held back from it, or it was away). Those records are open to every
/// device revoked since, which still holds that key.
struct SupersededKeyUse: Sendable, Equatable {
    /// The device that sealed them.
    var device: DeviceID
    /// The epoch they were sealed under, and the later one that had begun.
    var epoch: UInt32, newer: UInt32
    /// The stamp of the first record sealed under the later epoch (by any device), and of the last one this device sealed under the old.
    var began: HLCTimestamp, latest: HLCTimestamp

    /// The uses among `folders`' records: a device's last record under an epoch stamped after the first
    /// record, of any device, under a later one. (A clock running ahead can make a record sealed before
    /// the new epoch look later: the devices revoked since hold its key all the same.)
    static func find(in folders: [DeviceID: SealedEpochs]) -> [SupersededKeyUse] {
        // The first stamp under each epoch, of any device.
        var firsts: [UInt32: HLCTimestamp] = [:]
        for epochs in folders.values {
            for (epoch, span) in epochs.spans { firsts[epoch] = min(firsts[epoch] ?? span.lowerBound, span.lowerBound) }
        }
        var uses: [SupersededKeyUse] = []
        for (device, epochs) in folders.sorted(by: { $0.key.hex < $1.key.hex }) {
            for (epoch, span) in epochs.spans.sorted(by: { $0.key < $1.key }) {
                guard let (newer, began) = firsts.filter({ $0.key > epoch }).min(by: { $0.value < $1.value }).map({ ($0.key, $0.value) }),
                      span.upperBound > began else { continue }
                uses.append(SupersededKeyUse(device: device, epoch: epoch, newer: newer, began: began, latest: span.upperBound))
            }
        }
        return uses
    }
}
