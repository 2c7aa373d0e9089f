import Foundation

@testable import CourierPosix
@testable import CourierSpool

/// What tests do to a spool from outside courier: a script dropping a file
/// the maildir way, a past crash that left a file in `sending/`, a person's
/// `mv`. Courier itself changes a spool only by `SpoolSession.commit`;
/// these write the files directly, as those others would.
extension Spool {
    /// A whole file under `name` in `state`, the maildir way.
    func deliverNewFile(_ bytes: [UInt8], named name: FileName, into state: SpoolState) throws(SpoolError) {
        try deliverNewFile(bytes, named: name, into: directory(state))
    }

    /// The same into any folder of the spool.
    func deliverNewFile(_ bytes: [UInt8], named name: FileName, into directory: DirectoryHandle) throws(SpoolError) {
        do {
            try tmp.writeAtomically(bytes, as: name, in: directory, staged: uniqueTemporaryName(for: name))
        } catch {
            throw SpoolError(error)
        }
    }

    /// A state file in `.courier/`, as an earlier courier (or a person) left it.
    func writeControlFile(_ name: String, _ bytes: [UInt8]) throws(SpoolError) {
        try deliverNewFile(bytes, named: FileName(name), into: control)
    }

    /// A person's `mv` between state folders (never over a name there).
    func move(_ name: FileName, from: SpoolState, to: SpoolState) throws(SpoolError) {
        do {
            try directory(from).rename(name, to: directory(to), as: name, replacing: false)
        } catch {
            throw SpoolError(error)
        }
    }
}
