#!/usr/bin/env python3
"""Compares a recorded graph (`replayer dot TRACE`) with the graph CUDA's own stream capture built
from the same work (the "node I TYPE" / "edge A B" lines tests/cuda/vector_add_streams.cu writes).

  gpu-topology.py RECORDED.dot CAPTURED.txt

The graphs are the same when, after removing nodes that only order (barriers, empty nodes), their
transitive closures are isomorphic with node types matched: the recorder may keep redundant edges,
never miss one, and capture drops none. Exits 0 when they match, 1 with both graphs printed when not,
2 on unreadable input.
"""
import re
import sys

ORDER_ONLY = {"barrier"}


def read_recorded(path):
    """Top-level nodes and edges of the segment with the most nodes."""
    text = open(path).read()
    segment_of, types, edges = {}, {}, []
    segment = None
    for line in text.splitlines():
        line = line.strip()
        opened = re.match(r"subgraph cluster_segment_(\d+) \{", line)
        if opened:
            segment = opened.group(1)
            continue
        if line.startswith("subgraph cluster_n"):
            segment = "inner"
            continue
        if line == "}":
            segment = None
            continue
        node = re.match(r'n(\d+) \[label="ID = \d+\\nTYPE = (\w+)', line)
        if node and segment not in (None, "inner"):
            types[node.group(1)] = node.group(2)
            segment_of[node.group(1)] = segment
            continue
        edge = re.match(r"n(\d+) -> n(\d+) \[", line)
        if edge:
            edges.append(edge.groups())
    if not types:
        raise ValueError(f"{path}: no recorded nodes")
    counts = {}
    for s in segment_of.values():
        counts[s] = counts.get(s, 0) + 1
    busiest = max(counts, key=counts.get)
    keep = {n for n, s in segment_of.items() if s == busiest}
    return {n: types[n] for n in keep}, [(a, b) for a, b in edges if a in keep and b in keep]


def read_captured(path):
    types, edges = {}, []
    for number, line in enumerate(open(path), 1):
        fields = line.split()
        if len(fields) == 3 and fields[0] == "node":
            types[fields[1]] = fields[2]
        elif len(fields) == 3 and fields[0] == "edge":
            edges.append((fields[1], fields[2]))
        elif fields:
            raise ValueError(f"{path}:{number}: cannot read {line.strip()!r}")
    return types, edges


def closure_without_order_only(types, edges):
    """Reachability between the nodes that do work; order-only nodes pass reachability through."""
    successors = {n: set() for n in types}
    for a, b in edges:
        if a not in types or b not in types:
            raise ValueError(f"edge {a} -> {b} names a node that is not in the graph")
        successors[a].add(b)
    reach = {}

    def reachable(n):
        if n not in reach:
            reach[n] = set()
            for s in successors[n]:
                reach[n] |= {s} | reachable(s)
        return reach[n]

    work = {n: t for n, t in types.items() if t not in ORDER_ONLY}
    return work, {(a, b) for a in work for b in reachable(a) if b in work}


def isomorphic(left, right):
    (left_types, left_edges), (right_types, right_edges) = left, right
    if sorted(left_types.values()) != sorted(right_types.values()) or len(left_edges) != len(right_edges):
        return False
    order = sorted(left_types)
    mapping, used = {}, set()

    def consistent(a):
        for b in mapping:
            if ((a, b) in left_edges) != ((mapping[a], mapping[b]) in right_edges):
                return False
            if ((b, a) in left_edges) != ((mapping[b], mapping[a]) in right_edges):
                return False
        return True

    def extend(i):
        if i == len(order):
            return True
        a = order[i]
        for candidate in right_types:
            if candidate in used or right_types[candidate] != left_types[a]:
                continue
            mapping[a] = candidate
            used.add(candidate)
            if consistent(a) and extend(i + 1):
                return True
            del mapping[a]
            used.discard(candidate)
        return False

    return extend(0)


def show(name, graph):
    types, edges = graph
    nodes = ", ".join(f"{n}:{t}" for n, t in sorted(types.items(), key=lambda item: int(item[0])))
    print(f"{name}: nodes {nodes}; ordered pairs {sorted(edges, key=lambda e: (int(e[0]), int(e[1])))}")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        recorded = closure_without_order_only(*read_recorded(sys.argv[1]))
        captured = closure_without_order_only(*read_captured(sys.argv[2]))
    except (OSError, ValueError) as error:
        print(f"gpu-topology: {error}", file=sys.stderr)
        return 2
    if isomorphic(recorded, captured):
        print(f"topology: recorded graph == stream-capture graph ({len(recorded[0])} nodes, {len(recorded[1])} ordered pairs)")
        return 0
    print("topology: the recorded graph differs from the stream-capture graph")
    show("recorded", recorded)
    show("captured", captured)
    return 1


if __name__ == "__main__":
    sys.exit(main())
