import Testing
@testable import KVStore

@Suite("Keys and file names")
struct FileNameTests {
    @Test("escapes", arguments: [
        ("plain", "plain"), ("a/b", "a%2Fb"), ("nul\u{0}", "nul%00"), ("100%", "100%"), ("%2F", "%252F"),
        ("%25", "%2525"), ("a%2Eb", "a%252Eb"), (".", "%2E"), ("..", "%2E."), (".kvfs", "%2Ekvfs"),
        (".hidden", ".hidden"), ("...", "..."), ("%zz", "%zz"), ("%2f", "%2f"), ("😀", "😀"),
    ])
    func escapes(key: String, name: String) {
        #expect(FileName.encode(StoreKey(key)) == name)
        #expect(FileName.decode(name) == StoreKey(key))
    }

    @Test func namesThatAreNoKey() {
        for name in ["", ".", "..", ".kvfs", "a%2Eb", "%2Ehidden", "a/b"] {
            #expect(FileName.decode(name) == nil, "\(name)")
        }
    }

    @Test func randomKeysRoundTripAndNeverLookLikeDirectoryEntries() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["/", "%", "2", "F", "E", "0", "5", ".", "\u{0}", "a", "é", "😀", "k", "v", "f", "s", "\n"]
        for _ in 0..<20_000 {
            let length = Int.random(in: 1...12, using: &generator)
            let key = StoreKey(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            let name = FileName.encode(key)
            #expect(FileName.decode(name) == key, "\(key.debugDescription) → \(name)")
            #expect(!name.contains("/") && !name.contains("\u{0}") && ![".", "..", ".kvfs"].contains(name))
        }
    }

    @Test func randomNamesDecodeOnlyWhenCanonical() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["%", "2", "F", "E", "0", "5", ".", "a"]
        for _ in 0..<20_000 {
            let name = String((0..<Int.random(in: 1...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            if let key = FileName.decode(name) { #expect(FileName.encode(key) == name) }
        }
    }

    @Test func keyLengthIsCountedInUTF16Units() throws {
        try QuotaUsage.checkKey(StoreKey(String(repeating: "a", count: 128)))
        try QuotaUsage.checkKey(StoreKey(String(repeating: "😀", count: 64)))
        #expect(throws: KVStoreError.keyTooLong(key: StoreKey(String(repeating: "a", count: 129)), utf16Units: 129)) {
            try QuotaUsage.checkKey(StoreKey(String(repeating: "a", count: 129)))
        }
        #expect(throws: KVStoreError.self) { try QuotaUsage.checkKey(StoreKey(String(repeating: "😀", count: 65))) }
        #expect(throws: KVStoreError.emptyKey) { try QuotaUsage.checkKey("") }
    }
}
