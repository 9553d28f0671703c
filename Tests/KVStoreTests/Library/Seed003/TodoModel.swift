// Seed 003 ("SwiftTODOs"): to-dos that save themselves, archived with
// NSCoding, under their UUID (TodoModel) or a key of the caller's (TodosModel).
// The seed's code with these edits, and no others:
// 1. the port itself: `NSUserDefaults.standardUserDefaults()` becomes
//    `NSUbiquitousKeyValueStore.default` (five times);
// 2. Swift 2 names become Swift 6's: `encodeWithCoder(aCoder:)` → `encode(with:)`,
//    `encodeObject`/`encodeBool` → `encode(_:forKey:)`, `decodeObjectForKey` →
//    `decodeObject(forKey:)`, `decodeBoolForKey` → `decodeBool(forKey:)`,
//    `archivedDataWithRootObject` → `archivedData(withRootObject:)`,
//    `unarchiveObjectWithData(… as! NSData)` → `unarchiveObject(with: … as! Data)`,
//    `setObject(_:forKey:)` → `set(_:forKey:)`, `objectForKey` → `object(forKey:)`,
//    `UUIDString` → `uuidString`, and `loadLocally(uuid:)` takes its argument
//    unlabelled (`loadLocally(_:)`), as Swift 2 called it;
// 3. what the seed leaves out, written: the stored properties, `init(content:)`,
//    `getUUID()`, and the bodies of the two `deleteLocally`.
import Foundation
import KVStore

public class TodoModel: NSObject, NSCoding {
    var uuid: NSUUID
    public var content: String
    public var completed: Bool

    public init(content: String) {
        self.uuid = NSUUID()
        self.content = content
        self.completed = false
    }

    public func getUUID() -> NSUUID { uuid }

    public func encode(with aCoder: NSCoder) {
        aCoder.encode(uuid, forKey: "uuid")
        aCoder.encode(content, forKey: "content")
        aCoder.encode(completed, forKey: "completed")
    }

    public required init(coder aDecoder: NSCoder) {
        uuid = aDecoder.decodeObject(forKey: "uuid") as! NSUUID
        content = aDecoder.decodeObject(forKey: "content") as! String
        completed = aDecoder.decodeBool(forKey: "completed")
    }

    //MARK: Local Storage
    public func saveLocally() {
        let userDefaults = NSUbiquitousKeyValueStore.default
        let encodedData = NSKeyedArchiver.archivedData(withRootObject: self);
        userDefaults.set(encodedData, forKey: self.uuid.uuidString)
    }

    public static func loadLocally(_ uuid: NSUUID) -> TodoModel? {
        let userDefaults = NSUbiquitousKeyValueStore.default
        if let todoData = userDefaults.object(forKey: uuid.uuidString) {
            return NSKeyedUnarchiver.unarchiveObject(with: todoData as! Data) as? TodoModel
        }
        return nil
    }

    public func deleteLocally() {
        let userDefaults = NSUbiquitousKeyValueStore.default
        userDefaults.removeObject(forKey: self.uuid.uuidString)
    }
}

public class TodosModel {
    public  var list: [TodoModel] = []

    public init() {}

    public func filter(completedFilter: Bool?) -> [TodoModel] {
        return list.filter { (TodoModel) -> Bool in
            return completedFilter == nil || TodoModel.completed == completedFilter
        }
    }

    public func saveLocally(key: String) {
        let userDefaults = NSUbiquitousKeyValueStore.default
        let encodedData = NSKeyedArchiver.archivedData(withRootObject: list)
        userDefaults.set(encodedData, forKey: key)
    }

    public static func loadLocally(key: String) -> [TodoModel]? {
        let userDefaults = NSUbiquitousKeyValueStore.default
        if let todoData = userDefaults.object(forKey: key) {
            return NSKeyedUnarchiver.unarchiveObject(with: todoData as! Data) as? [TodoModel]
        }
        return nil
    }

    public static func deleteLocally(key: String) {
        let userDefaults = NSUbiquitousKeyValueStore.default
        userDefaults.removeObject(forKey: key)
    }
}
