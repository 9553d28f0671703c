import Foundation

/// The folder that holds every store of a user, each in the folder its
/// identifier names: `$XDG_DATA_HOME/kvfs/` by default, whose `default` is
/// the store kvfs has always used (``DeviceStore/defaultSyncDirectory``).
///
/// Sharing the root (one Syncthing folder, one Unison root) shares every
/// store in it: a store made on one machine is a new folder, which arrives on
/// the others like any other file, and is then listed and opened there by its
/// identifier, with nothing to set up.
public struct StoreRoot: Sendable, Equatable {
    /// The root folder.
    public let url: URL

    /// The root at `url`.
    public init(url: URL) {
        self.url = url.standardizedFileURL
    }

    /// `$XDG_DATA_HOME/kvfs/`: where the default store's folder is.
    public static var `default`: StoreRoot {
        StoreRoot(url: DeviceStore.defaultSyncDirectory.deletingLastPathComponent())
    }

    /// The folder of the store `identifier`: its sync directory.
    public func folder(of identifier: StoreIdentifier) -> URL {
        url.appendingPathComponent(identifier.rawValue, isDirectory: true)
    }

    /// The stores in the root, in byte order of their identifiers: each real
    /// folder (not a link) whose name is an identifier and that holds a
    /// store's files (`store-id`, or the `devices` folder). Anything else in
    /// the root (a synchronizer's own folders, files, a half-arrived folder
    /// with neither) is no store.
    public func stores() -> [StoreIdentifier] {
        guard let root = (try? Folder.open(url.path, writable: false)) ?? nil else { return [] }
        return root.names().compactMap { name -> StoreIdentifier? in
            guard let identifier = try? StoreIdentifier(name), root.hasFolder(name),
                  let folder = (try? root.folder(name)) ?? nil,
                  folder.entry("store-id") != nil || folder.hasFolder("devices") else { return nil }
            return identifier
        }.sorted()
    }
}
