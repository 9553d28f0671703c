/// Secrets a person reads on one screen and types on another, as words: one
/// word a byte, from a list of 256 common English words (sorted, distinct,
/// lower-case ASCII), so a 16-byte pairing code is 16 words and a 32-byte
/// recovery key 32 (docs/sealed.md § Pairing, § Recovery key).
///
/// Typing is forgiving where it cannot weaken the secret: case, extra white
/// space, commas and hyphens between the words are ignored. A word not in the
/// list is named in the error, so a typo is found at once.
enum WordCode {
    /// The 256 words, the byte value of each its index.
    static let words: [String] = [
        "acid", "acorn", "actor", "adobe", "agent", "alarm", "album", "alley", "amber", "angle", "ankle", "apple",
        "apron", "arena", "arrow", "aspen", "atlas", "attic", "award", "bacon", "badge", "bagel", "baker", "banjo",
        "barn", "basil", "basin", "beach", "beard", "bench", "berry", "bison", "blade", "blaze", "blend", "bloom",
        "board", "bonus", "boots", "brain", "brass", "bread", "brick", "bride", "brook", "broom", "brush", "bugle",
        "cabin", "camel", "canoe", "cargo", "carrot", "castle", "cedar", "cellar", "chalk", "cherry", "chess", "cider",
        "cinema", "circus", "citrus", "clam", "cliff", "clock", "cloud", "clover", "cobra", "cocoa", "comet", "coral",
        "cotton", "couch", "cougar", "crane", "crater", "crayon", "crown", "daisy", "dancer", "delta", "denim",
        "desert", "dinner", "doctor", "donkey", "dragon", "drum", "eagle", "easel", "echo", "elbow", "elder", "engine",
        "falcon", "fennel", "ferry", "fiddle", "field", "finch", "flame", "flask", "flute", "forest", "fossil", "fox",
        "frost", "galaxy", "garden", "garlic", "gecko", "geyser", "ginger", "globe", "goblet", "goose", "grape",
        "gravel", "guitar", "hammer", "harbor", "harp", "hazel", "helmet", "heron", "hippo", "honey", "hornet",
        "hotel", "igloo", "iris", "island", "ivory", "jacket", "jaguar", "jelly", "jewel", "jigsaw", "jungle", "kayak",
        "kernel", "kettle", "kiwi", "koala", "ladder", "lagoon", "laptop", "lemon", "lentil", "lily", "linen",
        "lizard", "locket", "lotus", "magnet", "mango", "maple", "marble", "meadow", "melon", "mirror", "mitten",
        "monkey", "mosaic", "muffin", "mural", "napkin", "nectar", "needle", "nickel", "noodle", "oasis", "ocean",
        "olive", "onion", "orbit", "orchid", "otter", "oyster", "paddle", "palace", "panda", "parrot", "peach",
        "peanut", "pebble", "pepper", "piano", "pickle", "pigeon", "pillow", "pirate", "planet", "plum", "pocket",
        "pony", "poppy", "potato", "prism", "puzzle", "quartz", "quill", "rabbit", "radar", "radish", "raven", "reef",
        "rhino", "ribbon", "river", "robin", "rocket", "saddle", "salmon", "sandal", "saucer", "scarf", "shadow",
        "shell", "silver", "skate", "sled", "sloth", "spider", "spoon", "squid", "stable", "statue", "summit",
        "sunset", "swan", "tablet", "tango", "teapot", "temple", "tiger", "timber", "toast", "tomato", "tulip",
        "tunnel", "turtle", "valley", "velvet", "violin", "wagon", "walnut", "walrus", "whale", "willow", "window",
        "wizard", "yogurt", "zebra", "zipper"
    ]

    private static let indices: [String: UInt8] = Dictionary(
        uniqueKeysWithValues: words.enumerated().map { ($0.element, UInt8($0.offset)) })

    /// The words for `bytes`, separated by single spaces.
    static func words(for bytes: some Sequence<UInt8>) -> String {
        bytes.map { words[Int($0)] }.joined(separator: " ")
    }

    /// The bytes `text` spells, which must be exactly `count` words of the list.
    static func bytes(from text: String, count: Int) throws(MembershipError) -> [UInt8] {
        let typed = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0.isNewline || $0 == "\t" })
        var bytes: [UInt8] = []
        for word in typed {
            guard let byte = indices[String(word)] else {
                throw MembershipError("\"\(word.prefix(32))\" is not one of the code's words: check what you typed")
            }
            bytes.append(byte)
        }
        guard bytes.count == count else {
            throw MembershipError("the code has \(count) words; \(bytes.count) were typed")
        }
        return bytes
    }
}
