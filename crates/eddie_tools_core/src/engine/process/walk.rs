//! Which processes of a process-table snapshot belong to a command's tree: the pure walk the
//! shims share (Linux's in `supervisor.rs`, macOS's in `kqueue_shim.rs`).
//!
//! It runs in a child forked from a multi-threaded process (the shim), so it allocates
//! nothing, takes no lock and cannot panic: it works in place on slices the caller owns.

/// One process of a snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Proc {
    /// Its pid.
    pub pid: i32,
    /// Its parent's pid (1 once its parent is gone and no subreaper adopted it).
    pub ppid: i32,
    /// Its process group (0: unknown, the group rule is not applied to it).
    pub pgid: i32,
    /// When it started, in any unit that differs between two processes that had the same pid
    /// (0: unknown). A remembered process only matches a row with the same start.
    pub start: i64,
    /// Set by [`mark_tree`]: it belongs to the tree.
    pub mark: bool,
}

/// Marks the rows of `rows` (one snapshot) that belong to the tree of `root` (which is not
/// marked itself):
/// - its descendants by parent links;
/// - the processes in `known` (members seen by an earlier snapshot, matched by pid and start):
///   where orphans are re-parented to init (no subreaper), the parent link is lost, the
///   memory is not;
/// - the members of a process group led by a member (a group leader's `setsid`-free
///   children that were orphaned between two snapshots).
///
/// The number of rows marked.
pub fn mark_tree(root: i32, rows: &mut [Proc], known: &[Proc]) -> usize {
    for r in rows.iter_mut() {
        r.mark = r.pid != root && known.iter().any(|k| k.pid == r.pid && k.start == r.start);
    }
    // One pass per generation at most: repeat until nothing changes.
    loop {
        let mut changed = false;
        for i in 0..rows.len() {
            if rows[i].mark || rows[i].pid == root {
                continue;
            }
            let (parent, group) = (rows[i].ppid, rows[i].pgid);
            let hit = parent == root
                || rows.iter().any(|r| r.mark && (r.pid == parent || (group > 0 && r.pid == group)));
            if hit {
                rows[i].mark = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    rows.iter().filter(|r| r.mark).count()
}

/// Replaces the rows of `known` by the members marked in `rows` (so the processes that no
/// longer exist are forgotten), as many as fit; how many it wrote.
pub fn remember(rows: &[Proc], known: &mut [Proc]) -> usize {
    let mut n = 0;
    for r in rows.iter().filter(|r| r.mark) {
        if n == known.len() {
            break;
        }
        known[n] = Proc { mark: false, ..*r };
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, pgid: i32, start: i64) -> Proc {
        Proc { pid, ppid, pgid, start, mark: false }
    }

    fn marked(rows: &[Proc]) -> Vec<i32> {
        rows.iter().filter(|r| r.mark).map(|r| r.pid).collect()
    }

    #[test]
    fn descendants_of_every_generation_are_marked_in_any_order() {
        // 10 is the shim; 11 its command; 12, 13 its children; 14 a grandchild listed first.
        let mut rows = [
            p(14, 13, 10, 5),
            p(1, 0, 1, 1),
            p(10, 9, 10, 2),
            p(11, 10, 10, 3),
            p(13, 11, 10, 4),
            p(12, 11, 10, 4),
            p(20, 1, 20, 6),
        ];
        assert_eq!(mark_tree(10, &mut rows, &[]), 4);
        assert_eq!(marked(&rows), vec![14, 11, 13, 12]);
    }

    #[test]
    fn the_root_its_ancestors_and_strangers_are_never_marked() {
        let mut rows = [p(9, 1, 9, 1), p(10, 9, 10, 2), p(30, 9, 30, 3), p(31, 30, 10, 0)];
        // 31 claims the root's group (pgid 10): the group rule only follows members.
        assert_eq!(mark_tree(10, &mut rows, &[]), 0);
    }

    #[test]
    fn an_orphan_reparented_to_init_stays_a_member_by_memory() {
        // First snapshot: 10 → 11 → 12 (a daemon that double-forks).
        let mut first = [p(10, 9, 10, 1), p(11, 10, 10, 2), p(12, 11, 12, 3)];
        mark_tree(10, &mut first, &[]);
        let mut known = [Proc::default(); 8];
        let n = remember(&first, &mut known);
        assert_eq!(n, 2);
        // 11 exited; 12 was adopted by init and forked 13 in its own new session.
        let mut second = [p(10, 9, 10, 1), p(12, 1, 12, 3), p(13, 12, 12, 4), p(50, 1, 50, 9)];
        assert_eq!(mark_tree(10, &mut second, &known[..n]), 2);
        assert_eq!(marked(&second), vec![12, 13]);
        assert_eq!(remember(&second, &mut known), 2);
        assert_eq!(&known[..2], &[p(12, 1, 12, 3), p(13, 12, 12, 4)]);
    }

    #[test]
    fn a_reused_pid_is_not_a_remembered_member() {
        let known = [p(12, 11, 12, 3)];
        // pid 12 again, but a different process (another start): not ours.
        let mut rows = [p(10, 9, 10, 1), p(12, 1, 12, 7)];
        assert_eq!(mark_tree(10, &mut rows, &known), 0);
    }

    #[test]
    fn the_group_of_a_member_is_followed_even_after_its_parent_link_is_lost() {
        // 12 (a member) leads group 12; 15 is in it but was orphaned before any snapshot saw it.
        let mut rows =
            [p(10, 9, 10, 1), p(11, 10, 10, 2), p(12, 11, 12, 3), p(15, 1, 12, 8), p(16, 1, 16, 8)];
        assert_eq!(mark_tree(10, &mut rows, &[]), 3);
        assert_eq!(marked(&rows), vec![11, 12, 15]);
    }

    #[test]
    fn remember_keeps_what_fits() {
        let mut rows = [p(11, 10, 0, 0), p(12, 10, 0, 0), p(13, 10, 0, 0)];
        mark_tree(10, &mut rows, &[]);
        let mut known = [Proc::default(); 2];
        assert_eq!(remember(&rows, &mut known), 2);
    }
}
