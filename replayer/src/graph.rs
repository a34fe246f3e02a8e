//! Topological ordering, shared by validation, planning and the checks of nested sub-graphs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Orders `node_count` nodes so that every edge `(from, to)` goes forward. Among the nodes
/// that are ready at the same time the lowest index goes first, so the order is stable and
/// follows recording order wherever dependencies allow.
///
/// Every edge must name nodes below `node_count`. On a cycle, `Err` holds the nodes that
/// could not be ordered (those on a cycle or behind one), in index order.
pub fn topological_order(
    node_count: usize,
    edges: impl IntoIterator<Item = (usize, usize)>,
) -> Result<Vec<usize>, Vec<usize>> {
    // Successors in one array, each node's from `first_successor[node]` on: no list per node.
    let edges: Vec<(usize, usize)> = edges.into_iter().collect();
    let mut first_successor = vec![0usize; node_count + 1];
    let mut waiting_on = vec![0usize; node_count];
    for &(from, to) in &edges {
        first_successor[from + 1] += 1;
        waiting_on[to] += 1;
    }
    for node in 0..node_count {
        first_successor[node + 1] += first_successor[node];
    }
    let mut successors = vec![0usize; edges.len()];
    let mut filled = first_successor.clone();
    for &(from, to) in &edges {
        successors[filled[from]] = to;
        filled[from] += 1;
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..node_count).filter(|&n| waiting_on[n] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(node_count);
    while let Some(Reverse(node)) = ready.pop() {
        order.push(node);
        for &next in &successors[first_successor[node]..first_successor[node + 1]] {
            waiting_on[next] -= 1;
            if waiting_on[next] == 0 {
                ready.push(Reverse(next));
            }
        }
    }
    if order.len() == node_count {
        Ok(order)
    } else {
        Err((0..node_count).filter(|&n| waiting_on[n] > 0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_nodes_go_in_index_order() {
        // 3 -> 0, 2 and 1 free: 1, 2, 3 are ready first; 0 waits for 3.
        assert_eq!(topological_order(4, [(3, 0)]), Ok(vec![1, 2, 3, 0]));
    }

    #[test]
    fn a_cycle_names_the_nodes_it_blocks() {
        // 0 -> 1 -> 2 -> 1, and 2 -> 3: 1, 2 are on the cycle, 3 is behind it.
        assert_eq!(topological_order(4, [(0, 1), (1, 2), (2, 1), (2, 3)]), Err(vec![1, 2, 3]));
    }
}
