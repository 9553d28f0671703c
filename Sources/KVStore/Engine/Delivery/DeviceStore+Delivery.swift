import Foundation

/// Delivery: which devices have read this device's writes (docs/sync.md § Delivery).
extension DeviceStore {
    /// How often ``waitUntilDelivered(keys:timeout:)`` looks at the other devices' progress.
    static let deliveryPollInterval: Duration = .milliseconds(10)

    /// The devices that have read `key`'s current version: this one first,
    /// then the others by name; empty when the key shows no value.
    public func deliveredTo(key: StoreKey) -> [DeviceInfo] {
        let folders = survey.survey()
        let (inputs, stamp) = engine.withLock { ($0.statusInputs(present: folders.keys), $0.merged.visible[key]?.stamp) }
        return stamp.map { inputs.devices(thatHaveRead: $0, folders: folders) } ?? []
    }

    /// The devices counted as active in the status (see ``status(staleAfter:)``)
    /// that have not read this device's latest writes of `keys` (of every key when nil), by name.
    public func devicesLacking(latestWritesOf keys: [StoreKey]? = nil, staleAfter: TimeInterval = DeviceStore.staleAfter) -> [DeviceInfo] {
        let folders = survey.survey()
        let inputs = engine.withLock { $0.statusInputs(present: folders.keys) }
        return inputs.devices(lackingLatestWritesOf: keys, folders: folders, now: Date(), staleAfter: staleAfter)
    }

    /// Waits until every device counted as active has read this device's
    /// latest writes of `keys` (of every key when nil), or `timeout` has
    /// passed; returns the devices that have not (empty: delivered).
    public func waitUntilDelivered(keys: [StoreKey]? = nil, timeout: Duration) async -> [DeviceInfo] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let lacking = devicesLacking(latestWritesOf: keys)
            guard !lacking.isEmpty, ContinuousClock.now < deadline else { return lacking }
            try? await Task.sleep(for: min(Self.deliveryPollInterval, deadline - ContinuousClock.now))
        }
    }

    /// Publishes how far this device has read the others soon, if that moved
    /// (``ProgressPublisher/publishPromptly(_:then:)``), and then tells the
    /// commit listeners, which carry this device's folder to other machines.
    /// Only the device's primary process publishes, as it does on schedule.
    func publishProgressPromptly() {
        guard state.isPrimary else { return }
        progress.publishPromptly({ [weak self] in
            self?.engine.withLock { $0.isClosed ? nil : $0.readProgress() }
        }, then: { [weak self] in
            self?.notifier.committed()
        })
    }
}
