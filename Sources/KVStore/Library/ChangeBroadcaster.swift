import Foundation
import Synchronization

/// Hands a store's changes to both audiences Apple's API has: NotificationCenter
/// observers of `didChangeExternallyNotification`, and (kvfs's addition) every
/// subscriber to the store's `changes` async sequence.
final class ChangeBroadcaster: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<StoreChange>.Continuation]>([:])

    /// A new stream that receives every change from now on, until the store goes away.
    func subscribe() -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream()
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Posts the notification (object: `store`) and yields the change to every subscriber.
    func post(_ change: StoreChange, from store: AnyObject) {
        // Apple's reason is an NSNumber: `as? Int` and `as? NSNumber` both work on it.
        let userInfo: [AnyHashable: Any] = [
            AppleNames.changeReasonKey: NSNumber(value: change.reason.rawValue),
            AppleNames.changedKeysKey: change.keys.map(\.string),
        ]
        NotificationCenter.default.post(name: AppleNames.didChangeExternally, object: store, userInfo: userInfo)
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(change) }
    }

    /// Runs `write`, a write of `key` by `store`; when it is refused for quota,
    /// posts QuotaViolationChange for the key before rethrowing. Both stores
    /// refuse this way, so an observer has heard of the refusal, on the
    /// writer's thread, by the time the setter returns.
    func postingQuotaRefusal(of key: StoreKey, by store: AnyObject, _ write: () throws(KVStoreError) -> Void) throws(KVStoreError) {
        do {
            try write()
        } catch {
            if error.isQuotaViolation { post(StoreChange(reason: .quotaViolationChange, keys: [key]), from: store) }
            throw error
        }
    }

    deinit {
        // The store is gone: end every `for await` loop over its changes.
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
