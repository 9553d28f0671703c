import Foundation

/// Delivery for a store without other devices (``InMemoryKeyValueStore``,
/// a test's own store): no device has read anything, and there is nothing to wait for.
extension KeyValueStore {
    /// No devices: empty.
    public func deliveredTo(key: String) -> [DeviceInfo] { [] }

    /// Nothing to wait for: true at once.
    public func waitUntilDelivered(timeout: TimeInterval) async -> Bool { true }
}
