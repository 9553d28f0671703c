import CFUSE
import Glibc

// The opcodes about extended attributes: SETXATTR, GETXATTR, LISTXATTR, REMOVEXATTR.

/// `SETXATTR`.
func doSetxattr(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?,
                _ size: Int, _ flags: Int32) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let attributes = box.attributes else { throw .ENOSYS }
        try attributes.setxattr(InodeNumber(ino), name: name, value: UnsafeRawBufferPointer(start: value, count: size),
                                flags: ExtendedAttributeFlags(rawValue: flags), request: request.context)
        replySuccess(request)
    }
}

/// `GETXATTR`, with the size probe and `ERANGE` handled here.
func doGetxattr(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ size: Int) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let attributes = box.attributes else { throw .ENOSYS }
        try replyExtendedAttribute(request, try attributes.getxattr(InodeNumber(ino), name: name, request: request.context), size: size)
    }
}

/// `LISTXATTR`: the names packed, each ended by a NUL byte.
func doListxattr(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ size: Int) {
    answer(req) { box, request throws(Errno) in
        guard let attributes = box.attributes else { throw .ENOSYS }
        var packed: [UInt8] = []
        for name in try attributes.listxattr(InodeNumber(ino), request: request.context) {
            packed.append(contentsOf: name.utf8)
            packed.append(0)
        }
        try replyExtendedAttribute(request, packed, size: size)
    }
}

/// `REMOVEXATTR`.
func doRemovexattr(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ name: UnsafePointer<CChar>?) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let attributes = box.attributes else { throw .ENOSYS }
        try attributes.removexattr(InodeNumber(ino), name: name, request: request.context)
        replySuccess(request)
    }
}
