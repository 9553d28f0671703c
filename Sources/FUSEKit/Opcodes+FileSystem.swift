import CFUSE
import Glibc

// The opcodes about the filesystem as a whole: INIT, STATFS, ACCESS.

/// `INIT`: lets the filesystem choose the connection's features.
func doInit(_ userdata: UnsafeMutableRawPointer?, _ conn: UnsafeMutablePointer<fuse_conn_info>?) {
    guard let userdata, let conn else { return }
    let box = Unmanaged<OperationsBox>.fromOpaque(userdata).takeUnretainedValue()
    var info = ConnectionInfo(conn.pointee)
    box.configuring?.initialize(&info)
    // libfuse aborts the session if `want` asks for more than `capable`.
    info.want.formIntersection(info.capable)
    info.apply(to: &conn.pointee)
}

/// `STATFS`.
func doStatfs(_ req: fuse_req_t?, _ ino: fuse_ino_t) {
    answer(req) { box, request throws(Errno) in
        var st = try (box.statistics?.statfs(InodeNumber(ino), request: request.context) ?? FileSystemStatistics()).statvfs
        fuse_reply_statfs(request.raw, &st)
    }
}

/// `ACCESS`.
func doAccess(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ mask: Int32) {
    answer(req) { box, request throws(Errno) in
        guard let access = box.access else { throw .ENOSYS }
        try access.access(InodeNumber(ino), mask: mask, request: request.context)
        replySuccess(request)
    }
}
