import Foundation

/// The strings and numbers Apple's NSUbiquitousKeyValueStore uses, in one place.
enum AppleNames {
    static let didChangeExternally = Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification")
    static let changeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
    static let changedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
}

extension KeyValueStore {
    /// Posted on `NotificationCenter.default` when the store changed without this
    /// process writing: another device's writes arrived, the first sync found
    /// changes, a write was refused for quota, or the sync directory now holds
    /// another store. The object is the store; `userInfo` holds the reason
    /// (`NSUbiquitousKeyValueStoreChangeReasonKey`, an `NSNumber`/`Int`) and the
    /// changed keys (`NSUbiquitousKeyValueStoreChangedKeysKey`, `[String]`).
    public static var didChangeExternallyNotification: Notification.Name { AppleNames.didChangeExternally }
}

// Darwin's Foundation already has these; elsewhere they make code written for
// Apple's store compile unchanged.
#if !canImport(Darwin)
/// Apple's name for the sync-directory store, so `NSUbiquitousKeyValueStore.default` compiles on Linux.
public typealias NSUbiquitousKeyValueStore = UbiquitousKeyValueStore

/// The `userInfo` key of a change notification's reason (an `Int`, as `NSNumber`).
public let NSUbiquitousKeyValueStoreChangeReasonKey = AppleNames.changeReasonKey
/// The `userInfo` key of a change notification's changed keys (`[String]`).
public let NSUbiquitousKeyValueStoreChangedKeysKey = AppleNames.changedKeysKey
/// Reason 0: another device's writes arrived.
public let NSUbiquitousKeyValueStoreServerChange = ChangeReason.serverChange.rawValue
/// Reason 1: the first sync after opening, with the keys that changed while this device was away.
public let NSUbiquitousKeyValueStoreInitialSyncChange = ChangeReason.initialSyncChange.rawValue
/// Reason 2: a write was refused for quota (or concurrent writes passed a limit).
public let NSUbiquitousKeyValueStoreQuotaViolationChange = ChangeReason.quotaViolationChange.rawValue
/// Reason 3: the sync directory now holds a different store.
public let NSUbiquitousKeyValueStoreAccountChange = ChangeReason.accountChange.rawValue
#endif
