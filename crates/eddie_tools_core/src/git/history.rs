//! The orders of `git log`, made as git makes them (`revision.c`), since libgit2's time sort
//! breaks ties differently.
//!
//! - **Default**: a queue ordered by commit date, newest first; among equal dates, the commit
//!   that entered the queue first comes out first (git's `commit_list_insert_by_date` and its
//!   priority queue both keep insertion order for ties). A commit enters when its first child
//!   comes out, parents in order. So a linear history in one second comes out in parent order,
//!   and a merge's first parent before its second. `since` drops an older commit without
//!   following its parents, as git's unlimited walk does.
//! - **Topo** (`--topo-order`) and **Date** (`--date-order`): the default walk's list, then
//!   git's `sort_in_topological_order`: no parent before all of its children; the work queue is
//!   a stack (topo: a line of history is followed to its end before the next, the first tip
//!   first, a merge's last parent first) or a date queue (date: newest first, ties by entry).
//!
//! A range `a..b` walks only the commits of the range (found with libgit2's hide), in the same
//! orders.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{ErrorCode, Result};

/// The order of commits (`git log`, `--topo-order`, `--date-order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// git log's default: newest commit date first, ties in the order git reaches them.
    #[default]
    Default,
    /// --topo-order: no parent before all its children, each line of history kept together.
    Topo,
    /// --date-order: no parent before all its children, otherwise newest commit date first.
    Date,
}

/// A queued commit: newest date first, then the one queued first.
#[derive(PartialEq, Eq)]
struct Queued {
    date: i64,
    seq: u64,
    id: git2::Oid,
}

impl Ord for Queued {
    fn cmp(&self, o: &Self) -> Ordering {
        self.date.cmp(&o.date).then_with(|| o.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A date queue that keeps insertion order among equal dates.
#[derive(Default)]
struct DateQueue {
    heap: BinaryHeap<Queued>,
    seq: u64,
}

impl DateQueue {
    fn put(&mut self, id: git2::Oid, date: i64) {
        self.heap.push(Queued { date, seq: self.seq, id });
        self.seq += 1;
    }

    fn get(&mut self) -> Option<git2::Oid> {
        self.heap.pop().map(|q| q.id)
    }
}

/// git log's default walk from `start`, lazily (a `maxCount` of 10 reads about 10 commits).
pub struct Walk<'r> {
    repo: &'r git2::Repository,
    queue: DateQueue,
    seen: HashSet<git2::Oid>,
    /// The commits of a range; `None`: everything reachable.
    within: Option<HashSet<git2::Oid>>,
    since: Option<i64>,
}

fn fail(e: &git2::Error) -> crate::error::ToolError {
    super::err(e, ErrorCode::Internal, "log")
}

impl<'r> Walk<'r> {
    /// A walk from `start`, leaving out what `hide` reaches (a range `hide..start`), and
    /// commits older than `since` together with what only they lead to.
    pub fn new(
        repo: &'r git2::Repository,
        start: git2::Oid,
        hide: Option<git2::Oid>,
        since: Option<i64>,
    ) -> Result<Self> {
        let within = match hide {
            None => None,
            Some(h) => {
                let mut w = repo.revwalk().map_err(|e| fail(&e))?;
                w.push(start).map_err(|e| fail(&e))?;
                w.hide(h).map_err(|e| fail(&e))?;
                Some(w.collect::<std::result::Result<HashSet<_>, _>>().map_err(|e| fail(&e))?)
            }
        };
        let mut walk = Self { repo, queue: DateQueue::default(), seen: HashSet::new(), within, since };
        walk.enter(start)?;
        Ok(walk)
    }

    fn enter(&mut self, id: git2::Oid) -> Result<()> {
        if self.within.as_ref().is_some_and(|w| !w.contains(&id)) || !self.seen.insert(id) {
            return Ok(());
        }
        let date = self.repo.find_commit(id).map_err(|e| fail(&e))?.time().seconds();
        self.queue.put(id, date);
        Ok(())
    }

    fn step(&mut self) -> Result<Option<git2::Commit<'r>>> {
        while let Some(id) = self.queue.get() {
            let c = self.repo.find_commit(id).map_err(|e| fail(&e))?;
            if self.since.is_some_and(|s| c.time().seconds() < s) {
                continue;
            }
            for p in c.parent_ids() {
                self.enter(p)?;
            }
            return Ok(Some(c));
        }
        Ok(None)
    }
}

impl<'r> Iterator for Walk<'r> {
    type Item = Result<git2::Commit<'r>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step().transpose()
    }
}

/// git's `sort_in_topological_order` of `list` (commits in the default walk's order, each with
/// its date and parents): `by_date` for `--date-order`, else `--topo-order`.
pub fn topo_sort(list: &[(git2::Oid, i64, Vec<git2::Oid>)], by_date: bool) -> Vec<git2::Oid> {
    // 1 + the number of children in the list; 0 once shown (or for a commit not in the list).
    let mut indegree: HashMap<git2::Oid, usize> = list.iter().map(|(id, _, _)| (*id, 1)).collect();
    for (_, _, parents) in list {
        for p in parents {
            if let Some(d) = indegree.get_mut(p) {
                *d += 1;
            }
        }
    }
    let info: HashMap<git2::Oid, (i64, &[git2::Oid])> =
        list.iter().map(|(id, date, parents)| (*id, (*date, parents.as_slice()))).collect();
    let tips = list.iter().filter(|(id, _, _)| indegree.get(id) == Some(&1));
    let mut stack: Vec<git2::Oid> = Vec::new();
    let mut queue = DateQueue::default();
    if by_date {
        for (id, date, _) in tips {
            queue.put(*id, *date);
        }
    } else {
        // The tips in the order the walk gave them: the first on top.
        stack = tips.map(|(id, _, _)| *id).collect();
        stack.reverse();
    }
    let mut out = Vec::with_capacity(list.len());
    loop {
        let next = if by_date { queue.get() } else { stack.pop() };
        let Some(id) = next else { break };
        let parents = info.get(&id).map_or(&[][..], |(_, p)| *p);
        for p in parents {
            let Some(d) = indegree.get_mut(p) else { continue };
            if *d == 0 {
                continue;
            }
            *d -= 1;
            if *d == 1 {
                if by_date {
                    queue.put(*p, info.get(p).map_or(0, |(date, _)| *date));
                } else {
                    stack.push(*p);
                }
            }
        }
        indegree.insert(id, 0);
        out.push(id);
    }
    out
}
