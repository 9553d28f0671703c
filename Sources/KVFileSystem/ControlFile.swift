import FUSEKit
import KVStore

/// The read-only files of `.kvfs/`: generated from the store when opened.
enum ControlFile {
    case status
    case changeLog

    init?(_ inode: InodeNumber) {
        switch inode {
        case NodeTable.status: self = .status
        case NodeTable.changeLog: self = .changeLog
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .status: "status"
        case .changeLog: "changes.log"
        }
    }

    var inode: InodeNumber {
        switch self {
        case .status: NodeTable.status
        case .changeLog: NodeTable.changeLog
        }
    }

    func content(of store: DeviceStore) -> [UInt8] {
        switch self {
        case .status: Array(store.status().json().utf8)
        case .changeLog: store.changeLogContents()
        }
    }
}
