import Foundation
import Testing
@testable import KVStore

/// Every input the fuzzers kept (Tests/Fuzz/corpus), every crasher they
/// found (Tests/Fuzz/crashers) and the hand-made hostile samples go through
/// the decoders on every test run: a regression in any of them shows here
/// even where libFuzzer cannot run (mount-scripts/fuzz.sh --check runs it).
@Suite("Fuzz corpus")
struct FuzzCorpusTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/Fuzz"

    static func inputs(_ folders: String...) -> [[UInt8]] {
        folders.flatMap { folder -> [[UInt8]] in
            let path = fuzz + "/" + folder
            return Files.list(path).sorted().compactMap { name in (try? Files.read(path + "/" + name)) ?? nil }
        }
    }

    @Test("each target's corpus decodes or is refused, each input within a second", arguments: [
        ("binary-plist", ["corpus/binary-plist", "samples/plist"]), ("xml-plist", ["corpus/xml-plist"]),
        ("journal-frame", ["corpus/journal-frame", "samples/journal"]), ("record", ["corpus/record"]),
    ])
    func corpus(target: String, folders: [String]) {
        let inputs = folders.flatMap { Self.inputs($0) } + Self.inputs("crashers")
        #expect(!inputs.isEmpty)
        let clock = ContinuousClock()
        for input in inputs {
            let elapsed = clock.measure {
                input.withUnsafeBytes { bytes in
                    switch target {
                    case "binary-plist": _ = try? BinaryPropertyListReader.value(bytes, limits: .standard)
                    case "xml-plist": _ = try? XMLPropertyListReader.value(bytes, limits: .standard)
                    case "journal-frame": _ = RecordFrame.scan(bytes)
                    default: _ = RecordCodec.decode(bytes)
                    }
                }
            }
            #expect(elapsed < .seconds(1), "\(target): an input of \(input.count) bytes took \(elapsed)")
        }
    }
}
