/// What a device may be called. Its name shows in every other device's
/// status, log and `kvfs devices`, one a line, so it is short and has no
/// control characters: a name read from another device's folder that breaks
/// the rule (escape sequences for the terminal, a newline that forges a log
/// line) is never shown; that device goes by its id.
public enum DeviceName {
    /// The longest name, in characters.
    public static let maximumLength = 64

    /// `name`, when it may name a device.
    ///
    /// - Throws: ``KVStoreError/invalidDeviceName(reason:)`` saying why not.
    public static func validate(_ name: String) throws(KVStoreError) -> String {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else { throw .invalidDeviceName(reason: "the device name is empty") }
        guard !name.containsControlCharacters else {
            throw .invalidDeviceName(reason: "the device name contains a control character (a newline, a tab, ...)")
        }
        guard name.count <= maximumLength else {
            throw .invalidDeviceName(reason: "the device name is \(name.count) characters long; at most \(maximumLength) are allowed")
        }
        return name
    }

    /// A name as found in a device's folder, or nil when it may not be shown.
    static func shown(_ name: String?) -> String? {
        name.flatMap { try? validate($0) }
    }
}
