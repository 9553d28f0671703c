/// A machine's head: the one small object per machine (`heads/<machine>`)
/// that lists every file it carries for the sync root, each as the immutable
/// objects whose bytes, end to end, are the file. A reader learns all of one
/// machine's news from it with one GET, however many stores the root holds.
///
/// ```json
/// {"files":{"default/devices/<id>/journal-0000000000000001.log":[{"length":120,"object":"<sha-256>"}]},
///  "format":1,"machine":"<32 hex digits>","sequence":7}
/// ```
///
/// A file's path is relative to the sync root; an object's name is the
/// SHA-256 of its bytes, under `objects/<machine>/`. A journal segment that
/// grew gets one more object; a file replaced whole (a snapshot, a JSON file,
/// `store-id`) is one object, which changes when the file does.
struct Head: Codable, Equatable {
    /// One stretch of a file: an object and its length.
    struct Chunk: Codable, Equatable {
        var object: String
        var length: Int
    }

    /// The version of this layout: 1.
    var format = 1
    /// The machine that writes this head, 32 hex digits.
    var machine: String
    /// How many times the machine wrote its head: a reader that finds a smaller one than it read before has been rolled back.
    var sequence: Int
    /// Each file, by its path in the sync root, as its chunks in order.
    var files: [String: [Chunk]]

    /// The bytes the file of these chunks has.
    static func length(_ chunks: [Chunk]) -> Int { chunks.reduce(0) { $0 + $1.length } }
}
