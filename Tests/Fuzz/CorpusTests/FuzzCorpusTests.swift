import Foundation
import Testing
@testable import KVStore
import TestSupport

/// Every input the fuzzers kept (Tests/Fuzz/corpus), every crasher they
/// found (Tests/Fuzz/crashers) and the hand-made hostile samples go through
/// the fuzz targets' own oracles (Oracle.swift and the target files, compiled
/// into this test target) on every test run: an input that a target would
/// stop on fails here, even where libFuzzer cannot run
/// (mount-scripts/fuzz.sh --check runs it).
@Suite("Fuzz corpus")
struct FuzzCorpusTests {
    static let fuzz = Repository.path("Tests/Fuzz")

    /// The files of `folders` (under Tests/Fuzz), by name, with their bytes.
    static func inputs(_ folders: [String]) -> [(name: String, bytes: [UInt8])] {
        folders.flatMap { folder -> [(name: String, bytes: [UInt8])] in
            let path = fuzz + "/" + folder
            return Files.list(path).sorted().compactMap { name in
                ((try? Files.read(path + "/" + name)) ?? nil).map { (folder + "/" + name, $0) }
            }
        }
    }

    @Test("each input holds to its target's oracle (as the fuzz binary checks it), each within a second", arguments: [
        ("binary-plist", ["corpus/binary-plist", "samples/plist"]), ("xml-plist", ["corpus/xml-plist"]),
        ("journal-frame", ["corpus/journal-frame", "samples/journal"]), ("record", ["corpus/record"]),
        ("sealed-frame", ["corpus/sealed-frame"]),
        ("roster", ["corpus/roster"]), ("pairing", ["corpus/pairing"]), ("signed-file", ["corpus/signed-file"]),
    ])
    func corpus(target: String, folders: [String]) throws {
        let oracle = try #require(fuzzTargets[target])
        let inputs = Self.inputs(folders + ["crashers"])
        #expect(!inputs.isEmpty)
        let clock = ContinuousClock()
        for input in inputs {
            var failure: OracleFailure?
            let elapsed = clock.measure {
                input.bytes.withUnsafeBytes { bytes in
                    do throws(OracleFailure) { try oracle(bytes) } catch { failure = error }
                }
            }
            #expect(failure == nil, "\(target): \(input.name): \(failure?.description ?? "")")
            #expect(elapsed < .seconds(1), "\(target): \(input.name) (\(input.bytes.count) bytes) took \(elapsed)")
        }
    }

    @Test("the sealed-frame corpus's mark seeds read as they were made: records signed by a mark, an unsigned tail the device alone reads, a spoiled mark refused")
    func markSeeds() throws {
        func read(_ name: String, verifiesEach: Bool = true, own: Bool = false) throws -> RecordFrame.Scan {
            let bytes = try #require(try Files.read(Self.fuzz + "/corpus/sealed-frame/" + name))
            return bytes.withUnsafeBytes { SealedFuzzKeys.scan($0, verifiesEach: verifiesEach, own: own) }
        }
        #expect(try read("seed-mark-0").records.count == 3)
        #expect(try read("seed-mark-1").records.count == 2 && read("seed-mark-1", own: true).records.count == 4)
        let spoiled = try read("seed-mark-2")
        #expect(spoiled.records.count == 1 && spoiled.refused?.reason == .badSignature)
        #expect(try read("seed-mark-2", verifiesEach: false).signatureFailed)
    }
}
