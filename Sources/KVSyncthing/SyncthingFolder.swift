import Foundation

/// The Syncthing folder that holds a sync directory, and the paths, inside
/// it, of the sync directory and of one device's folder: what
/// `POST /rest/db/scan?folder=ID&sub=PATH` takes.
struct SyncthingFolder: Equatable, Sendable {
    /// The folder's id.
    var id: String
    /// The sync directory's path relative to the Syncthing folder's root (empty when it is the root).
    var syncDirectory: String
    /// The device folder's path relative to the Syncthing folder's root.
    var sub: String

    /// The folder among `/rest/config/folders`' answer whose path is the sync
    /// directory or holds it (the deepest, if several do), or nil.
    static func find(in folders: [UInt8], syncDirectory: String, deviceFolder: String) -> SyncthingFolder? {
        guard let list = try? JSONDecoder().decode([ConfiguredFolder].self, from: Data(folders)) else { return nil }
        let sync = canonical(syncDirectory)
        var best: (root: String, id: String)?
        for folder in list {
            guard let id = folder.id, let path = folder.path else { continue }
            let root = canonical(path)
            guard sync == root || sync.hasPrefix(root == "/" ? "/" : root + "/") else { continue }
            if root.count > (best?.root.count ?? -1) { best = (root, id) }
        }
        guard let best else { return nil }
        let inside = sync == best.root ? "" : String(sync.dropFirst(best.root == "/" ? 1 : best.root.count + 1))
        return SyncthingFolder(id: best.id, syncDirectory: inside, sub: inside.isEmpty ? deviceFolder : inside + "/" + deviceFolder)
    }

    /// One folder of `/rest/config/folders`, of whose fields only these two
    /// count; one whose `id` or `path` is not a string is passed over, not
    /// the whole answer.
    private struct ConfiguredFolder: Decodable {
        let id: String?
        let path: String?

        private enum CodingKeys: String, CodingKey { case id, path }

        init(from decoder: any Decoder) throws {
            let fields = try? decoder.container(keyedBy: CodingKeys.self)
            id = try? fields?.decode(String.self, forKey: .id)
            path = try? fields?.decode(String.self, forKey: .path)
        }
    }

    /// A path with `~` expanded as Syncthing does, links resolved when it
    /// exists, and no trailing slash.
    static func canonical(_ path: String) -> String {
        var expanded = path
        if expanded == "~" || expanded.hasPrefix("~/") {
            expanded = (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + expanded.dropFirst()
        }
        let url = URL(fileURLWithPath: expanded).standardizedFileURL.resolvingSymlinksInPath()
        var result = url.path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }
}
