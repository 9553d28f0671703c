import Foundation

/// Why the store changed without this device (or this process) writing: Apple's
/// four reasons, with Apple's codes.
public enum ChangeReason: Int, Sendable, Codable, CaseIterable {
    /// Another device's writes arrived.
    case serverChange = 0
    /// The first sync after start, with the keys that changed while this device was away.
    case initialSyncChange = 1
    /// A write was refused, or concurrent writes passed a limit.
    case quotaViolationChange = 2
    /// The sync directory now holds a different store.
    case accountChange = 3

    /// Apple's name for the reason, as the change log writes it.
    public var name: String {
        switch self {
        case .serverChange: "ServerChange"
        case .initialSyncChange: "InitialSyncChange"
        case .quotaViolationChange: "QuotaViolationChange"
        case .accountChange: "AccountChange"
        }
    }
}

/// One change that did not come from this device's own writes (or a quota refusal).
public struct StoreChange: Sendable, Equatable {
    /// Why it happened.
    public var reason: ChangeReason
    /// The keys whose values changed (or were refused), sorted.
    public var keys: [StoreKey]
    /// When it was noticed.
    public var time: Date

    /// Creates a change record.
    public init(reason: ChangeReason, keys: [StoreKey], time: Date = Date()) {
        self.reason = reason
        self.keys = keys.sorted()
        self.time = time
    }
}
