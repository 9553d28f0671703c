// What every fuzz target checks of its input (its oracle), by name: the fuzz
// binary runs one per input (Support.swift), and the test suite runs each
// over the corpus, the crashers and the samples (CorpusTests/), so that both
// hold every input to the same checks.

#if canImport(KVStore)
@testable import KVStore  // in the test suite; the fuzz binary compiles the KVStore sources into its own module
#endif

/// The targets by name, as mount-scripts/fuzz.sh and the corpus folders name them.
let fuzzTargets: [String: @Sendable (UnsafeRawBufferPointer) throws(OracleFailure) -> Void] = [
    "binary-plist": fuzzBinaryPropertyList,
    "xml-plist": fuzzXMLPropertyList,
    "journal-frame": fuzzJournalFrames,
    "record": fuzzRecord,
    "sealed-frame": fuzzSealedFrames,
    "roster": fuzzRoster,
    "pairing": fuzzPairing,
    "signed-file": fuzzSignedFile,
]

/// An input for which a target's invariant does not hold.
struct OracleFailure: Error, CustomStringConvertible {
    let description: String
}

/// Fails the input when `condition` does not hold.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) throws(OracleFailure) {
    if !condition() { throw OracleFailure(description: message()) }
}

/// A value's exact bits (the journal's encoding), for comparing values bit for bit.
func exactBits(_ value: PropertyListValue) -> [UInt8] { RecordCodec.valueBytes(value) }
