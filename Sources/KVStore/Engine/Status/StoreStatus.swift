import Foundation

/// A snapshot of a store's state: what `.kvfs/status` holds (as JSON, dates
/// in ISO 8601) and `kvfs status` reads back. It answers "why didn't my
/// laptop get the value": per device, when it was last heard from, how far it
/// has read the others and how far behind it is, and what blocks reading its
/// folder, as warnings that name the file and the fix.
public struct StoreStatus: Codable, Sendable, Equatable {
    /// The sync directory's store id.
    public var storeID: String
    /// The process that made the snapshot (the daemon, for a mount).
    public var pid: Int
    /// Its kvfs version.
    public var version: String
    /// Its executable, which ends in " (deleted)" once the binary was replaced under it.
    public var executable: String
    /// The sync directory's path.
    public var syncDirectory: String
    /// This device's state directory.
    public var stateDirectory: String
    /// Where the store is mounted, when a mount serves it.
    public var mountPoint: String?
    /// This device.
    public var device: DeviceStatus
    /// Keys used, and the limit.
    public var keys: Allowance
    /// Bytes used, and the limit.
    public var bytes: Allowance
    /// Keys the quota rule left out after concurrent writes.
    public var setAside: [String]
    /// Every known device, this one included.
    public var devices: [DeviceStatus]
    /// When other devices' records were last read.
    public var lastSync: Date?
    /// Seconds without news after which a device that has not closed its store counts as quiet.
    public var staleAfter: Double
    /// What keeps devices from getting each other's writes.
    public var warnings: [SyncWarning]
    /// A sealed store's membership as this device trusts it; nil (absent from the document) for a plain store.
    public var sealed: SealedStatus?

    /// An amount used against a limit.
    public struct Allowance: Codable, Sendable, Equatable {
        /// How much is used.
        public var used: Int
        /// The limit.
        public var limit: Int
    }

    /// The JSON document, pretty-printed with sorted keys.
    public func json() -> String { Self.json(self) }

    /// Any part of the status as the document writes it (dates in ISO 8601, with milliseconds).
    public static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(DateText.format(date))
        }
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self) + "\n"
    }

    /// The status a JSON document holds.
    public init(json: Data) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = DateText.parse(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
            }
            return date
        }
        self = try decoder.decode(Self.self, from: json)
    }

    init(storeID: String, syncDirectory: String, stateDirectory: String, mountPoint: String?, device: DeviceStatus,
         usage: QuotaUsage, setAside: [String], devices: [DeviceStatus], lastSync: Date?, staleAfter: Double,
         warnings: [SyncWarning], sealed: SealedStatus?) {
        self.sealed = sealed
        self.storeID = storeID
        pid = Int(ProcessInfo.processInfo.processIdentifier)
        version = KVFSVersion.description
        executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        self.syncDirectory = syncDirectory
        self.stateDirectory = stateDirectory
        self.mountPoint = mountPoint
        self.device = device
        keys = Allowance(used: usage.keys, limit: Limits.maxKeys)
        bytes = Allowance(used: usage.bytes, limit: Limits.maxTotalBytes)
        self.setAside = setAside
        self.devices = devices
        self.lastSync = lastSync
        self.staleAfter = staleAfter
        self.warnings = warnings
    }
}

/// A sealed store's membership, as the roster version a device trusts says it (docs/sealed.md § Roster).
public struct SealedStatus: Codable, Sendable, Equatable {
    /// One member device, by the id and the name the roster gives it (signed with it).
    public struct Member: Codable, Sendable, Equatable {
        /// Its device id, in hex.
        public var id: String
        /// The name the roster gives it.
        public var name: String
    }

    /// The number of the roster version this device trusts.
    public var rosterVersion: UInt64
    /// The epoch whose key new records are sealed under: raised by each revocation.
    public var epoch: UInt32
    /// The member devices, by id.
    public var members: [Member]
    /// Whether the roster names a recovery key (`kvfs join --recovery-key`).
    public var recoveryKey: Bool
}

/// One device as the status shows it.
public struct DeviceStatus: Codable, Sendable, Equatable {
    /// What is known of a device's life.
    public enum State: String, Codable, Sendable {
        /// The device serving the status.
        case this
        /// Heard from lately, or still running as far as anyone knows.
        case active
        /// It closed its store (unmounted, or its program ended) and has not been back.
        case stopped
        /// It has not closed its store, yet nothing of it arrived for longer than `staleAfter`.
        case quiet
        /// Its folder is gone without anyone retiring it; what it won is kept by other devices.
        case vanished
        /// Someone retired it (`kvfs retire`); what it won is kept by other devices.
        case retired
    }

    /// Its id.
    public var id: String
    /// Its name.
    public var name: String
    /// What is known of its life.
    public var state: State
    /// When its latest write still in force was made.
    public var lastWrite: Date?
    /// Its newest stamp read here (for this device: its latest write).
    public var newestStamp: Date?
    /// When its folder last changed here (the newest status change of its files on this machine).
    public var folderChanged: Date?
    /// When it last published its progress, by its own clock.
    public var heartbeat: Date?
    /// Seconds since anything of it arrived here.
    public var secondsSinceHeard: Double?
    /// Whether it closed its store after it last published its progress.
    public var closed: Bool
    /// How far this device has read its records without a gap.
    public var readUpTo: Date?
    /// How far it has read each other device (by id), as its progress says.
    public var read: [String: Date]
    /// How many seconds its reading lags behind the newest writes known here of the devices it reads.
    public var behindSeconds: Double?
    /// The device that keeps its records, once it was retired or its folder vanished.
    public var keptBy: String?
}

extension StoreStatus {
    /// The same status with devices judged quiet after `seconds` without news instead.
    public func judged(staleAfter seconds: Double) -> StoreStatus {
        var status = self
        status.staleAfter = seconds
        status.devices = devices.map { $0.judged(staleAfter: seconds) }
        status.warnings = warnings.filter { $0.kind != .quiet } + status.devices.compactMap { device in
            device.state == .quiet ? device.warning(staleAfter: seconds) : nil
        }
        return status
    }
}

extension DeviceStatus.State {
    /// Active or quiet, by how long nothing arrived of a device that has not closed its store.
    init(silence: Double?, staleAfter: Double) {
        self = silence.map { $0 > staleAfter } ?? true ? .quiet : .active
    }
}

extension DeviceStatus {
    /// Judged anew: quiet after `seconds` without news, if it was active or quiet.
    func judged(staleAfter seconds: Double) -> DeviceStatus {
        guard state == .active || state == .quiet else { return self }
        var device = self
        device.state = State(silence: secondsSinceHeard, staleAfter: seconds)
        return device
    }

    /// The warning its state calls for, if any.
    func warning(staleAfter: Double) -> SyncWarning? {
        let label = "\(name) (\(id))"
        switch state {
        case .quiet:
            let heard = folderChanged.map { "its folder here last changed at \(DateText.format($0))" } ?? "nothing of it is here"
            return SyncWarning(kind: .quiet, device: id, file: nil,
                               message: "\(label) has not been heard from for more than \(Int(staleAfter)) s (\(heard)), and it has not closed its store",
                               fix: "if it runs, check the synchronizer between it and this machine (running? connected?); if it is gone for good, run `kvfs retire \(id)`")
        case .vanished:
            return SyncWarning(kind: .vanished, device: id, file: nil,
                               message: "the folder of \(label) vanished without anyone retiring it; \(keptBy ?? "another device") keeps what it won, and removals wait for it",
                               fix: "if it is gone for good, run `kvfs retire \(id)`; if not, it writes its folder again when it runs")
        default:
            return nil
        }
    }
}

/// Something that keeps devices from getting each other's writes, with the fix.
public struct SyncWarning: Codable, Sendable, Equatable {
    /// What kind of trouble.
    public enum Kind: String, Codable, Sendable {
        /// A file of a device's folder cannot be read.
        case unreadable
        /// A newer snapshot is there but not whole.
        case incompleteSnapshot
        /// A journal segment has bytes that are not whole records yet, with records after them.
        case hole
        /// A later journal segment is there while the one being read still is, with no snapshot between.
        case outOfOrder
        /// Corrupt bytes were skipped.
        case corrupt
        /// A journal segment holds records stamped by another device.
        case foreignRecords
        /// A device that runs has not read this device's writes for long: its copy of this device's folder is stuck.
        case notReadingUs
        /// A device says it wrote more than its folder here holds, for long: the synchronizer does not deliver it.
        case staleCopy
        /// A device that has not closed its store has not been heard from for longer than the threshold.
        case quiet
        /// A device's folder vanished without anyone retiring it.
        case vanished
        /// This device's own folder holds (or held) records stamped more than the maximum offset ahead of its clock.
        case ownRecordsAhead
        /// The sync directory's path no longer names the folder this device opened, which it keeps using.
        case syncDirectoryMoved
        /// A sealed store's folder holds a record that is refused (forged, moved, altered, replayed or
        /// reordered, or written by a non-member), or went back: nothing from there on is merged.
        case refused
        /// This device writes nothing more: the store was sealed and it is no member, or a copy of its
        /// state directory took its folder.
        case notWriting
        /// A device sealed records under an epoch's key after a later epoch began (the roster had not
        /// reached it): the devices revoked since can read them.
        case supersededKey
    }

    /// What kind of trouble.
    public var kind: Kind
    /// The device concerned (its id), if one is.
    public var device: String?
    /// The file concerned, if one is.
    public var file: String?
    /// What is wrong.
    public var message: String
    /// What to do about it.
    public var fix: String
}
