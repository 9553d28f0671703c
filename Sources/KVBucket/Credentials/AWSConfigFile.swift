import Foundation

/// An AWS shared config or credentials file (`~/.aws/config`,
/// `~/.aws/credentials`): INI sections of `name = value` lines. In the config
/// file a profile's section is `[profile NAME]` (but `[default]`); in the
/// credentials file it is `[NAME]`.
struct AWSConfigFile {
    private(set) var sections: [String: [String: String]] = [:]

    /// The file at `path`, or nil when it cannot be read.
    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        self.init(text: String(decoding: data, as: UTF8.self))
    }

    /// The file whose text is `text`.
    init(text: String) {
        var section: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") {
                section = trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let section, let equals = trimmed.firstIndex(of: "=") else { continue }
            let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[section, default: [:]][name] = value
        }
    }

    /// The settings of `profile` in a credentials file.
    func credentialsProfile(_ profile: String) -> [String: String] { sections[profile] ?? [:] }

    /// The settings of `profile` in a config file.
    func configProfile(_ profile: String) -> [String: String] {
        sections[profile == "default" ? "default" : "profile \(profile)"] ?? sections[profile] ?? [:]
    }
}
