// Fuzz target: the journal frame reader, RecordFrame.scan (issue 7.3). Any
// bytes scan in linear time; offsets stay in bounds; the records found,
// framed again, scan back as themselves.

#if canImport(KVStore)
@testable import KVStore
#endif

func fuzzJournalFrames(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    let scan = RecordFrame.scan(bytes)
    try require(scan.settledOffset <= scan.resumeOffset && scan.resumeOffset <= bytes.count, "offsets out of order")
    try require(scan.settledCount <= scan.records.count, "settled count past the records")
    try require(scan.skipped.allSatisfy { $0.upperBound <= bytes.count }, "a skipped range past the end")
    let framed = scan.records.flatMap(RecordFrame.encode)
    let again = framed.withUnsafeBytes { RecordFrame.scan($0) }
    try require(again.records.map(RecordCodec.encode) == scan.records.map(RecordCodec.encode) && again.skipped.isEmpty
                && !again.stoppedEarly, "records do not frame back")
}
