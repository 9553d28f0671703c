import Foundation

/// Delivery: which devices have read this device's writes (docs/sync.md § Delivery).
extension DeviceStore {
    /// How often ``waitUntilDelivered(keys:timeout:staleAfter:)`` looks at the other devices' progress.
    static let deliveryPollInterval: Duration = .milliseconds(10)

    /// The devices that have read `key`'s current version: this one first,
    /// then the others by name; empty when the key shows no value. While a
    /// device counted as active has not, the others are asked to publish
    /// promptly what they read of its writer (`waiting.json`).
    public func deliveredTo(key: StoreKey) -> [DeviceInfo] {
        let folders = survey.survey()
        let (inputs, stamp) = engine.withLock { ($0.statusInputs(present: folders.keys), $0.merged.visible[key]?.stamp) }
        return stamp.map { devices(thatHaveRead: $0, inputs: inputs, folders: folders) } ?? []
    }

    /// The devices that have read the version stamped `stamp` (as
    /// ``deliveredTo(key:)`` says), asking for it while an active device has not.
    func devices(thatHaveRead stamp: Stamp, inputs: StatusInputs, folders: [DeviceID: FolderSurvey.Seen]) -> [DeviceInfo] {
        if !inputs.activeDevices(lacking: stamp, folders: folders, now: Date(), staleAfter: Self.staleAfter).isEmpty {
            askForDelivery(of: stamp.device, folders: folders)
        }
        return inputs.devices(thatHaveRead: stamp, folders: folders)
    }

    /// The devices counted as active in the status (see ``status(staleAfter:)``)
    /// that have not read this device's latest writes of `keys` (of every
    /// key when nil), by name. While there are any, the others are asked to
    /// publish promptly what they read of this device (`waiting.json`):
    /// ``waitUntilDelivered(keys:timeout:staleAfter:)`` and `kvfs wait` look here.
    public func devicesLacking(latestWritesOf keys: [StoreKey]? = nil, staleAfter: TimeInterval = DeviceStore.staleAfter) -> [DeviceInfo] {
        let folders = survey.survey()
        let inputs = engine.withLock { $0.statusInputs(present: folders.keys) }
        let lacking = inputs.devices(lackingLatestWritesOf: keys, folders: folders, now: Date(), staleAfter: staleAfter)
        if !lacking.isEmpty { askForDelivery(of: deviceID, folders: folders) }
        return lacking
    }

    /// Asks the other devices to publish promptly what they read of `device`
    /// (``WaitAnnouncer``), the standing request being this device's folder's
    /// in `folders`; a mount with `--syncthing` then asks Syncthing to scan
    /// its folder, as after a commit, so the request travels at once.
    private func askForDelivery(of device: DeviceID, folders: [DeviceID: FolderSurvey.Seen]) {
        if waits.ask(for: [device], standing: folders[deviceID]?.waiting) { notifier.committed() }
    }

    /// Waits until every device counted as active (heard from within
    /// `staleAfter`) has read this device's latest writes of `keys` (of every
    /// key when nil), or `timeout` has passed; returns the devices that have
    /// not (empty: delivered).
    public func waitUntilDelivered(keys: [StoreKey]? = nil, timeout: Duration,
                                   staleAfter: TimeInterval = DeviceStore.staleAfter) async -> [DeviceInfo] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let lacking = devicesLacking(latestWritesOf: keys, staleAfter: staleAfter)
            guard !lacking.isEmpty, ContinuousClock.now < deadline else { return lacking }
            try? await Task.sleep(for: min(Self.deliveryPollInterval, deadline - ContinuousClock.now))
        }
    }

    /// Publishes how far this device has read the `awaited` devices soon,
    /// if that moved (``ProgressPublisher/publishPromptly(of:_:then:)``), and
    /// then tells the commit listeners, which carry this device's folder to
    /// other machines. Only the device's primary process publishes, as it
    /// does on schedule; with nothing awaited, nothing is published now.
    func publishProgressPromptly(of awaited: Set<DeviceID>) {
        guard state.isPrimary, !awaited.isEmpty else { return }
        progress.publishPromptly(of: awaited, { [weak self] in
            self?.engine.withLock { $0.isClosed ? nil : $0.readProgress() }
        }, then: { [weak self] in
            self?.notifier.committed()
        })
    }
}
