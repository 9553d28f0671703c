// Fuzz target: the journal frame reader, RecordFrame.scan (issue 7.3). Any
// bytes scan in linear time; offsets stay in bounds; the records found,
// framed again, scan back as themselves.

func fuzzJournalFrames(_ bytes: UnsafeRawBufferPointer) {
    let scan = RecordFrame.scan(bytes)
    require(scan.settledOffset <= scan.resumeOffset && scan.resumeOffset <= bytes.count, "offsets out of order")
    require(scan.settledCount <= scan.records.count, "settled count past the records")
    require(scan.skipped.allSatisfy { $0.upperBound <= bytes.count }, "a skipped range past the end")
    let framed = scan.records.flatMap(RecordFrame.encode)
    let again = framed.withUnsafeBytes { RecordFrame.scan($0) }
    require(again.records.map(RecordCodec.encode) == scan.records.map(RecordCodec.encode) && again.skipped.isEmpty
            && !again.stoppedEarly, "records do not frame back")
}
