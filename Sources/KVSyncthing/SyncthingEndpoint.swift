import Foundation

/// Where Syncthing's REST API answers, and the key it wants.
///
/// The key comes from Syncthing's own `config.xml` (named, or found where
/// Syncthing keeps it) or from a file holding only the key, never from the
/// command line, where `ps` would show it to every user.
public struct SyncthingEndpoint: Sendable, CustomStringConvertible {
    /// The URL given (`http://127.0.0.1:8384`), for messages.
    public let url: String
    let host: String
    let port: UInt16
    let apiKey: String

    /// The URL, never the key.
    public var description: String { url }

    /// An endpoint at `url` (plain `http://HOST[:PORT]`) with `apiKey`.
    public init(url: String, apiKey: String) throws(SyncthingError) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !host.isEmpty else {
            throw SyncthingError("\(url) is not a URL like http://127.0.0.1:8384")
        }
        guard scheme == "http" else {
            throw SyncthingError("\(url): only plain http is supported (Syncthing's GUI on 127.0.0.1 with TLS off, its default)")
        }
        guard !apiKey.isEmpty, apiKey.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw SyncthingError("the Syncthing API key is empty or has spaces or control characters")
        }
        self.url = url
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        port = UInt16(parsed.port ?? 80)
        self.apiKey = apiKey
    }

    /// The endpoint at `url`, its key read from `keyFile` if given, else from
    /// `configFile` (Syncthing's `config.xml`) if given, else from the first
    /// of ``usualConfigFiles`` that exists.
    public static func load(url: String, configFile: String? = nil, keyFile: String? = nil) throws(SyncthingError) -> SyncthingEndpoint {
        if let keyFile {
            guard let text = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
                throw SyncthingError("cannot read the Syncthing API key file \(keyFile)")
            }
            return try SyncthingEndpoint(url: url, apiKey: text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let candidates = configFile.map { [$0] } ?? usualConfigFiles
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw SyncthingError(configFile.map { "\($0) does not exist" }
                ?? "no Syncthing config.xml in \(candidates.joined(separator: ", ")): name it with --syncthing-config, or give the key with --syncthing-key-file")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw SyncthingError("cannot read \(path)") }
        guard let key = apiKey(inConfig: text) else { throw SyncthingError("\(path) has no <apikey> in its <gui> section") }
        return try SyncthingEndpoint(url: url, apiKey: key)
    }

    /// Where Syncthing keeps `config.xml`: `$XDG_STATE_HOME/syncthing` (1.27
    /// and later), then `$XDG_CONFIG_HOME/syncthing` (earlier versions), with
    /// the XDG defaults under `$HOME`.
    public static var usualConfigFiles: [String] {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/state"
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        return [state + "/syncthing/config.xml", config + "/syncthing/config.xml"]
    }

    /// The `<apikey>` of a config.xml's `<gui>` section (the only element of that name).
    static func apiKey(inConfig text: String) -> String? {
        guard let open = text.range(of: "<apikey>"), let close = text.range(of: "</apikey>", range: open.upperBound..<text.endIndex) else {
            return nil
        }
        let key = text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return key.isEmpty ? nil : key
    }
}

/// Why Syncthing could not be used, in one line.
public struct SyncthingError: Error, CustomStringConvertible {
    /// The message.
    public let description: String
    init(_ description: String) { self.description = description }
}
