// The fuzz binary's entry point and what every target shares. The targets
// are compiled with the KVStore sources into one module (see
// mount-scripts/fuzz.sh), so they reach the internal decoders directly; one
// binary holds them all, and KVFS_FUZZ_TARGET picks the one a run drives.

#if canImport(Glibc)
import Glibc
#endif

/// The targets by name, as mount-scripts/fuzz.sh and the corpus folders name them.
let fuzzTargets: [String: (UnsafeRawBufferPointer) -> Void] = [
    "binary-plist": fuzzBinaryPropertyList,
    "xml-plist": fuzzXMLPropertyList,
    "journal-frame": fuzzJournalFrames,
    "record": fuzzRecord,
]

private let selectedTarget: (UnsafeRawBufferPointer) -> Void = {
    let name = getenv("KVFS_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = fuzzTargets[name] else {
        fatalError("set KVFS_FUZZ_TARGET to one of: \(fuzzTargets.keys.sorted().joined(separator: ", "))")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    selectedTarget(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

/// Stops the run (libFuzzer keeps the input as a crasher) when an invariant fails.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError(message()) }
}

/// A value's exact bits (the journal's encoding), for comparing values bit for bit.
func exactBits(_ value: PropertyListValue) -> [UInt8] { RecordCodec.valueBytes(value) }
