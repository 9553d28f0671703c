import Foundation
import Synchronization

/// Identifies a change observer, to remove it.
public struct ObserverToken: Hashable, Sendable {
    let id: Int
}

/// Who hears of a store's changes, and how: the change log, the change
/// observers, the visibility observers and the commit listeners.
///
/// Observers are called on one private serial queue, in the order the
/// changes happened; commit listeners on the writing thread. None is ever
/// called from inside the store's `Mutex`: the store hands what changed
/// over once it has let go of it.
final class ChangeNotifier: Sendable {
    /// The change log (`.kvfs/changes.log`).
    let changeLog: ChangeLog
    private let queue = DispatchQueue(label: "kvfs.store.changes")
    private let registry = Mutex(Registry())

    /// Everyone listening, by token.
    private struct Registry {
        var changeObservers: [Int: @Sendable (StoreChange) -> Void] = [:]
        var visibilityObservers: [Int: @Sendable (Set<StoreKey>) -> Void] = [:]
        var commitListeners: [Int: @Sendable () -> Void] = [:]
        /// Gets each record this device appends (the property tests' reference model).
        var appendListener: (@Sendable (JournalRecord) -> Void)?
        var lastToken = 0
        /// The InitialSyncChange of opening, until the first change observer takes it.
        var undeliveredInitialChange: StoreChange?

        mutating func nextToken() -> ObserverToken {
            lastToken += 1
            return ObserverToken(id: lastToken)
        }
    }

    init(changeLog: ChangeLog) {
        self.changeLog = changeLog
    }

    /// Adds a change observer; the first one also gets the InitialSyncChange of opening, if there was one.
    func addChangeObserver(_ observer: @escaping @Sendable (StoreChange) -> Void) -> ObserverToken {
        registry.withLock { registry in
            let token = registry.nextToken()
            registry.changeObservers[token.id] = observer
            if let initial = registry.undeliveredInitialChange {
                registry.undeliveredInitialChange = nil
                queue.async { observer(initial) }
            }
            return token
        }
    }

    /// Adds a visibility observer.
    func addVisibilityObserver(_ observer: @escaping @Sendable (Set<StoreKey>) -> Void) -> ObserverToken {
        registry.withLock { registry in
            let token = registry.nextToken()
            registry.visibilityObservers[token.id] = observer
            return token
        }
    }

    /// Adds a commit listener.
    func addCommitListener(_ listener: @escaping @Sendable () -> Void) -> ObserverToken {
        registry.withLock { registry in
            let token = registry.nextToken()
            registry.commitListeners[token.id] = listener
            return token
        }
    }

    /// Removes a change or visibility observer.
    func removeObserver(_ token: ObserverToken) {
        registry.withLock { registry in
            registry.changeObservers[token.id] = nil
            registry.visibilityObservers[token.id] = nil
        }
    }

    /// Removes a commit listener.
    func removeCommitListener(_ token: ObserverToken) {
        _ = registry.withLock { $0.commitListeners.removeValue(forKey: token.id) }
    }

    /// Keeps the InitialSyncChange of opening for the first change observer, which may come later.
    func holdForFirstObserver(_ change: StoreChange) {
        registry.withLock { $0.undeliveredInitialChange = change }
    }

    /// Logs a change and tells the change observers (unless `notifying` is
    /// false: a write's own quota refusal, which its writer learns from the
    /// error and the library posts on the writer's thread).
    func record(_ change: StoreChange, notifying: Bool = true) {
        changeLog.append(change)
        guard notifying else { return }
        let observers = registry.withLock { Array($0.changeObservers.values) }
        queue.async { for observer in observers { observer(change) } }
    }

    /// Tells the visibility observers that `keys` changed.
    func announceVisible(_ keys: Set<StoreKey>) {
        guard !keys.isEmpty else { return }
        let observers = registry.withLock { Array($0.visibilityObservers.values) }
        guard !observers.isEmpty else { return }
        queue.async { for observer in observers { observer(keys) } }
    }

    /// Calls `listener` with each record this device appends, on the writing thread.
    func listenToAppends(_ listener: @escaping @Sendable (JournalRecord) -> Void) {
        registry.withLock { $0.appendListener = listener }
    }

    /// Tells the append listener of a record this device appended.
    func appended(_ record: JournalRecord) {
        registry.withLock { $0.appendListener }?(record)
    }

    /// Calls the commit listeners, on this thread.
    func committed() {
        for listener in registry.withLock({ Array($0.commitListeners.values) }) { listener() }
    }
}
