@testable import KVBucket
import Testing

/// The small XML reader of S3's answers: what S3 sends is read whole, anything else is refused.
@Suite("S3's XML answers")
struct XMLNodeTests {
    @Test("a listing with a declaration, a namespace, entities and a self-closing element is read")
    func listing() throws {
        let document = try #require(XMLNode.parse(Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix/>\
            <Contents><Key>a&amp;b&#x2F;c &lt;d&gt;</Key><Size>12</Size></Contents>\
            <Contents><Key>e</Key><Size>0</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>
            """.utf8)))
        #expect(document.name == "ListBucketResult")
        #expect(document.all("Contents").map { $0.child("Key") } == ["a&b/c <d>", "e"])
        #expect(document.child("Prefix") == "" && document.child("IsTruncated") == "false")
        #expect(document.first("Size")?.text == "12")
    }

    @Test("what is not such XML is nil: unclosed or crossed elements, text outside, an unknown entity, a DTD, nothing")
    func refused() {
        for text in ["<a><b></a></b>", "<a>", "text<a/>", "<a>&nope;</a>", "<!DOCTYPE a><a/>", "", "<a/><b/>", "<a></a>trailing"] {
            #expect(XMLNode.parse(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
