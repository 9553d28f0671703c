// The fuzz binary's entry point. The targets are compiled with the KVStore
// sources into one module (see mount-scripts/fuzz.sh), so they reach the
// internal decoders directly; one binary holds them all, and
// KVFS_FUZZ_TARGET picks the one a run drives. What each checks is in Oracle.swift.

#if canImport(Glibc)
import Glibc
#endif

private let selectedTarget: @Sendable (UnsafeRawBufferPointer) throws(OracleFailure) -> Void = {
    let name = getenv("KVFS_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = fuzzTargets[name] else {
        fatalError("set KVFS_FUZZ_TARGET to one of: \(fuzzTargets.keys.sorted().joined(separator: ", "))")
    }
    return target
}()

/// Stops the run (libFuzzer keeps the input as a crasher) when an invariant fails.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    do throws(OracleFailure) {
        try selectedTarget(UnsafeRawBufferPointer(start: start, count: count))
    } catch {
        fatalError(error.description)
    }
    return 0
}
