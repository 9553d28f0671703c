import FUSEKit
import KVStore

/// Editors' scratch files, by name: kept in memory on this mount only.
///
/// A name is held by its exact scalars (``StoreKey``), as keys are, so two
/// names that differ only in normalization are two files, as two such keys are.
struct ScratchFiles {
    /// A scratch file: its content and when it was last changed.
    typealias File = (content: [UInt8], modified: Timestamp)

    private var files: [StoreKey: File] = [:]

    /// The file of that name, if any; nil removes it.
    subscript(_ name: String) -> File? {
        get { files[StoreKey(name)] }
        set { files[StoreKey(name)] = newValue }
    }

    /// Removes the file of that name, and returns it.
    mutating func remove(_ name: String) -> File? {
        files.removeValue(forKey: StoreKey(name))
    }

    /// Every file's name.
    var names: [StoreKey] { Array(files.keys) }

    /// How many files there are.
    var count: Int { files.count }

    /// The bytes their contents take together.
    var bytes: Int { files.values.reduce(0) { $0 + $1.content.count } }
}
