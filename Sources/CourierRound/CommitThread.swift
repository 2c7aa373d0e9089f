import CourierPosix
import CourierSpool
import CourierSupport
import Glibc

/// The thread a delivery pass's commits run on — its group commits and its
/// intake groups' — so that the HTTP loop keeps starting and collecting
/// requests while one commit writes and fsyncs the ledger, renames and
/// fsyncs the folders. One commit at a time, in the order handed, each
/// through `SpoolSession.commit` and holding the `SessionGate`; the loop
/// hands the next only after it has taken the previous one's outcome, so
/// commits of the session never overlap and never reorder.
final class CommitThread {
    /// What the commit said: the warnings for moves a person beat it to,
    /// or the error that stopped it.
    typealias Outcome = Result<[String], SpoolError>

    private let shared: Shared
    private let thread: pthread_t

    private init(shared: Shared, thread: pthread_t) {
        self.shared = shared
        self.thread = thread
    }

    /// Nil when no thread can be made (the system's limit): the pass then
    /// commits on its own thread, as it did before there was this one.
    static func start(gate: SessionGate) -> CommitThread? {
        let shared = Shared(gate: gate)
        let context = Unmanaged.passRetained(shared).toOpaque()
        var thread = pthread_t()
        let made = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Shared>.fromOpaque(context).takeRetainedValue().serve()
                return nil
            }, context)
        guard made == 0 else {
            Unmanaged<Shared>.fromOpaque(context).release()
            return nil
        }
        return CommitThread(shared: shared, thread: thread)
    }

    /// One commit, and what the pass says of it.
    static func carryOut(_ transition: Transition, in session: SpoolSession) -> Outcome {
        do {
            return .success(try session.commit(transition).vanished.map(movedAway))
        } catch {
            return .failure(error)
        }
    }

    /// The warning for a move whose file a person moved meanwhile: theirs
    /// is the last word.
    static func movedAway(_ move: Transition.Move) -> String {
        "\(move.from)\(move.name) was moved away by someone else; it stays where they put it"
    }

    /// Starts `work`, one or more commits of the session. The previous
    /// job's outcome must have been taken (`wait` or `poll`).
    func hand(_ work: @escaping () -> Outcome) {
        shared.state.withLock { $0.job = Job(work: work) }
        sem_post(shared.work)
    }

    /// The outcome of the commit handed last, waiting for it to finish.
    func wait() -> Outcome {
        while sem_wait(shared.done) != 0 {}
        return shared.takeOutcome()
    }

    /// The outcome of the commit handed last if it has finished.
    func poll() -> Outcome? {
        sem_trywait(shared.done) == 0 ? shared.takeOutcome() : nil
    }

    /// A file descriptor readable from when a commit finishes until its
    /// outcome is taken: the loop waits for answers and for it at once.
    var finishedSignal: EventSignal? { shared.finished }

    /// Lets a commit handed and not waited for finish (a crash could cut
    /// it anywhere too, but a pass that ends does not), then ends the
    /// thread.
    deinit {
        // No job: the thread ends once any job handed before is done.
        sem_post(shared.work)
        pthread_join(thread, nil)
    }

    /// Commits to carry out. `@unchecked Sendable`: made on the loop's
    /// thread and handed whole to the commit thread; the loop keeps no
    /// part of what it captures (a transition, an intake group and its
    /// hold of the serial lock), and it uses the session (not made for two
    /// threads) only while it holds the gate, as the commit thread does.
    private struct Job: @unchecked Sendable {
        let work: () -> Outcome
    }

    /// `@unchecked Sendable`: besides `state`, which its lock guards, it
    /// holds two POSIX semaphores, set up before the thread starts and
    /// destroyed after it ended; `sem_post` and `sem_wait` may be called
    /// from any thread, as `EventSignal`'s may.
    private final class Shared: @unchecked Sendable {
        struct State {
            var job: Job?
            var outcome: Outcome?
        }

        let state = Locked(State())
        let gate: SessionGate
        /// Posted for each job handed, and once with none to stop.
        let work = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        /// Posted as each job's outcome is ready.
        let done = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        /// Raised with `done`, for a poll: readable while an outcome waits.
        /// Nil if the system gave none: the loop then sees a commit finish
        /// at its next turn.
        let finished = EventSignal()

        init(gate: SessionGate) {
            self.gate = gate
            sem_init(work, 0, 0)
            sem_init(done, 0, 0)
        }

        deinit {
            sem_destroy(work)
            sem_destroy(done)
            work.deallocate()
            done.deallocate()
        }

        func takeOutcome() -> Outcome {
            finished?.clear()
            return state.withLock { state in
                let outcome = state.outcome ?? .success([])
                state.outcome = nil
                return outcome
            }
        }

        func serve() {
            // Signals are the loop's: a round's SIGTERM reaches the thread
            // that decides what to do with it.
            var signals = sigset_t()
            sigfillset(&signals)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            while true {
                while sem_wait(work) != 0 {}
                var job = state.withLock { state in
                    let job = state.job
                    state.job = nil
                    return job
                }
                guard job != nil else { return }
                gate.hold {
                    let outcome = job?.work() ?? .success([])
                    // What the job held goes with the gate still held: an
                    // intake group's hold of the serial lock is session
                    // state.
                    job = nil
                    state.withLock { $0.outcome = outcome }
                }
                // Readable before the outcome can be taken, so that taking
                // it always finds the count to clear.
                finished?.raise()
                sem_post(done)
            }
        }
    }
}
