@testable import FUSEKit
import Glibc
import Testing

@Suite("FUSEKit values")
struct ValueTests {
    @Test("mount options become libfuse arguments, with commas escaped")
    func mountArguments() {
        #expect(MountOptions().arguments == ["fusekit"])
        let options = MountOptions(fsName: "kv,store\\x", subtype: "kvfs", allowOther: true, defaultPermissions: true,
                                   autoUnmount: true, debug: true, other: ["max_read=65536"])
        #expect(options.arguments == ["fusekit", "-d", "-o",
            "fsname=kv\\,store\\\\x,subtype=kvfs,allow_other,default_permissions,auto_unmount,max_read=65536"])
    }

    @Test("Errno is a thrown, printable error")
    func errno() {
        #expect(Errno.ENOENT.rawValue == ENOENT)
        #expect(Errno.ENOENT.description == "No such file or directory")
        #expect(throws: Errno.EDQUOT) { throw Errno.EDQUOT as any Error }
    }

    @Test("file attributes become a struct stat")
    func attributes() {
        let attributes = FileAttributes(inode: 7, type: .regular, permissions: 0o4755, size: 513,
                                        modificationTime: Timestamp(seconds: 10, nanoseconds: 5))
        #expect(attributes.blocks == 2)
        let st = attributes.stat
        #expect(st.st_ino == 7 && st.st_mode == S_IFREG | 0o4755 && st.st_size == 513 && st.st_blocks == 2)
        #expect(st.st_mtim.tv_sec == 10 && st.st_mtim.tv_nsec == 5 && st.st_nlink == 1)
        #expect(Timestamp(seconds: 1, nanoseconds: 2) < Timestamp(seconds: 1, nanoseconds: 3))
        #expect(Timestamp(seconds: 3, nanoseconds: 40).description == "3.000000040")
    }

    @Test("setattr requests decode into typed changes")
    func attributeChanges() {
        var st = stat()
        st.st_mode = S_IFREG | 0o600
        st.st_size = 42
        st.st_mtim = timespec(tv_sec: 100, tv_nsec: 1)
        let fields: SetAttributeFields = [.mode, .size, .modificationTime, .accessTimeNow]
        let changes = AttributeChanges(st, toSet: fields.rawValue)
        #expect(changes.mode == S_IFREG | 0o600 && changes.size == 42 && changes.uid == nil && changes.gid == nil)
        #expect(changes.modificationTime == TimeChange.time(Timestamp(seconds: 100, nanoseconds: 1)))
        #expect(changes.accessTime == TimeChange.now && changes.changeTime == nil)
        #expect(changes.fields == fields)
    }

    @Test("negative entries carry no inode, positive ones their attributes")
    func entries() {
        let negative = EntryReply.negative(timeout: 5).entryParam
        #expect(negative.ino == 0 && negative.entry_timeout == 5)
        let positive = EntryReply(FileAttributes(inode: 9, type: .regular, permissions: 0o644), attributeTimeout: 2, entryTimeout: 3).entryParam
        #expect(positive.ino == 9 && positive.attr.st_ino == 9 && positive.attr_timeout == 2 && positive.entry_timeout == 3)
    }

    @Test("the bridge finds the groups of operations a filesystem conforms to, and only those")
    func operationGroups() {
        let minimal = OperationsBox(MinimalFileSystem())
        #expect(minimal.configuring == nil && minimal.counting == nil && minimal.reading == nil && minimal.writing == nil
                && minimal.directories == nil && minimal.names == nil && minimal.links == nil
                && minimal.attributes == nil && minimal.statistics == nil && minimal.access == nil)
        let memory = OperationsBox(MemoryFileSystem())
        #expect(memory.configuring != nil && memory.counting != nil && memory.reading != nil && memory.writing != nil
                && memory.directories != nil && memory.names != nil && memory.attributes != nil && memory.statistics != nil)
        #expect(memory.links == nil && memory.access == nil)
    }
}
