//! The diagram: an [`Outline`] of boxes and arrows laid out left to right, drawn as
//! inline SVG. Layers by longest path (cycles broken first), a few barycenter passes
//! to order each layer, boxes sized to their labels, elbow arrows. Deterministic: the
//! same outline always gives the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape::{clip, text};
use super::words::Outline;

/// At most this many boxes are drawn; the page says how many were left out.
pub const MAX_NODES: usize = 24;
/// At most this many arrows are drawn (a repeated one counts once).
pub const MAX_EDGES: usize = 4 * MAX_NODES;
/// A label longer than this is cut (the whole one is the box's tooltip).
const MAX_LABEL: usize = 40;
const CHAR_W: i64 = 7;
const BOX_H: i64 = 34;
const PAD_X: i64 = 12;
const GAP_X: i64 = 72;
const GAP_Y: i64 = 22;
const MARGIN: i64 = 16;

/// A laid-out diagram: where each box and arrow goes.
#[derive(Debug, PartialEq)]
pub struct Layout {
    pub boxes: Vec<Placed>,
    pub arrows: Vec<Arrow>,
    pub width: i64,
    pub height: i64,
    /// Boxes left out by the cap.
    pub cut: usize,
    /// Arrows left out: to a box that isn't there, from a box to itself, repeated, or
    /// past the cap.
    pub dropped: usize,
}

#[derive(Debug, PartialEq)]
pub struct Placed {
    pub label: String,
    pub layer: usize,
    pub x: i64,
    pub y: i64,
    pub w: i64,
}

#[derive(Debug, PartialEq)]
pub struct Arrow {
    /// The SVG path's points, in order.
    pub points: Vec<(i64, i64)>,
    pub label: Option<String>,
    /// Drawn against the flow (an edge that closed a cycle).
    pub back: bool,
}

/// Lays `outline` out.
pub fn layout(outline: &Outline) -> Layout {
    // The boxes: the first MAX_NODES distinct ids, in the outline's order.
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut labels: Vec<String> = Vec::new();
    let mut cut = 0;
    for n in &outline.nodes {
        if index.contains_key(n.id.as_str()) {
            continue;
        }
        if labels.len() == MAX_NODES {
            cut += 1;
            continue;
        }
        index.insert(n.id.as_str(), labels.len());
        labels.push(clip(n.label.trim(), MAX_LABEL));
    }
    let count = labels.len();
    let mut edges: Vec<(usize, usize, Option<String>)> = Vec::new();
    let mut dropped = 0;
    for e in &outline.edges {
        match (index.get(e.from.as_str()), index.get(e.to.as_str())) {
            (Some(&a), Some(&b))
                if a != b
                    && edges.len() < MAX_EDGES
                    && !edges.iter().any(|x| (x.0, x.1) == (a, b)) =>
            {
                edges.push((a, b, e.label.clone()))
            }
            _ => dropped += 1,
        }
    }
    let back = back_edges(count, &edges);
    // Longest-path layering over the acyclic graph (back edges turned around).
    let forward: Vec<(usize, usize)> = edges
        .iter()
        .zip(&back)
        .map(|(&(a, b, _), &rev)| if rev { (b, a) } else { (a, b) })
        .collect();
    let mut layer = vec![0usize; count];
    for v in topological(count, &forward) {
        for &(a, b) in forward.iter().filter(|(a, _)| *a == v) {
            layer[b] = layer[b].max(layer[a] + 1);
        }
    }
    let layers = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (v, &l) in layer.iter().enumerate() {
        order[l].push(v);
    }
    // Two sweeps each way: each box moves toward the mean position of its neighbours
    // in the layers already placed.
    for _ in 0..2 {
        for l in 1..layers {
            reorder(&mut order, l, &forward, &layer, true);
        }
        for l in (0..layers.saturating_sub(1)).rev() {
            reorder(&mut order, l, &forward, &layer, false);
        }
    }
    let widths: Vec<i64> = labels
        .iter()
        .map(|l| l.chars().count() as i64 * CHAR_W + 2 * PAD_X)
        .collect();
    let col_w: Vec<i64> = order
        .iter()
        .map(|vs| vs.iter().map(|&v| widths[v]).max().unwrap_or(0))
        .collect();
    let tallest = order.iter().map(Vec::len).max().unwrap_or(0) as i64;
    let body_h = (tallest * (BOX_H + GAP_Y) - GAP_Y).max(0);
    let mut col_x = Vec::with_capacity(layers);
    let mut x = MARGIN;
    for w in &col_w {
        col_x.push(x);
        x += w + GAP_X;
    }
    let width = (x - GAP_X + MARGIN).max(2 * MARGIN);
    let mut pos = vec![(0i64, 0i64); count];
    for (l, vs) in order.iter().enumerate() {
        let h = vs.len() as i64 * (BOX_H + GAP_Y) - GAP_Y;
        let top = MARGIN + (body_h - h) / 2;
        for (i, &v) in vs.iter().enumerate() {
            pos[v] = (
                col_x[l] + (col_w[l] - widths[v]) / 2,
                top + i as i64 * (BOX_H + GAP_Y),
            );
        }
    }
    // Arrows against the flow run below everything, one lane each.
    let mut lane = MARGIN + body_h + GAP_Y;
    let mut arrows = Vec::with_capacity(edges.len());
    for (&(a, b, ref label), &rev) in edges.iter().zip(&back) {
        let ((ax, ay), (bx, by)) = (pos[a], pos[b]);
        let points = if !rev && layer[b] > layer[a] {
            let (x1, y1) = (ax + widths[a], ay + BOX_H / 2);
            let (x2, y2) = (bx, by + BOX_H / 2);
            let mid = col_x[layer[a]] + col_w[layer[a]] + GAP_X / 2;
            vec![(x1, y1), (mid, y1), (mid, y2), (x2, y2)]
        } else {
            let (x1, x2) = (ax + widths[a] / 2, bx + widths[b] / 2);
            let points = vec![(x1, ay + BOX_H), (x1, lane), (x2, lane), (x2, by + BOX_H)];
            lane += GAP_Y / 2 + 4;
            points
        };
        arrows.push(Arrow {
            points,
            label: label.as_ref().map(|l| clip(l.trim(), MAX_LABEL)),
            back: rev,
        });
    }
    let height =
        lane.max(MARGIN + body_h + MARGIN) + if back.iter().any(|b| *b) { MARGIN } else { 0 };
    let boxes = labels
        .into_iter()
        .enumerate()
        .map(|(v, label)| Placed {
            label,
            layer: layer[v],
            x: pos[v].0,
            y: pos[v].1,
            w: widths[v],
        })
        .collect();
    Layout {
        boxes,
        arrows,
        width,
        height,
        cut,
        dropped,
    }
}

/// Which edges close a cycle: the back edges of a depth-first search in node order.
/// Turning them around leaves a graph with no cycle, so layering always ends.
fn back_edges(count: usize, edges: &[(usize, usize, Option<String>)]) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; count];
    let mut back = vec![false; edges.len()];
    for root in 0..count {
        if mark[root] != Mark::New {
            continue;
        }
        // An explicit stack of (node, next edge to look at): no recursion to overflow.
        let mut stack = vec![(root, 0usize)];
        mark[root] = Mark::Open;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            let Some(i) = (*next..edges.len()).find(|&i| edges[i].0 == v) else {
                mark[v] = Mark::Done;
                stack.pop();
                continue;
            };
            *next = i + 1;
            let w = edges[i].1;
            match mark[w] {
                Mark::Open => back[i] = true,
                Mark::New => {
                    mark[w] = Mark::Open;
                    stack.push((w, 0));
                }
                Mark::Done => {}
            }
        }
    }
    back
}

/// The nodes in an order where every edge goes forward (Kahn's algorithm, smallest
/// ready node first); `edges` must have no cycle.
fn topological(count: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut indegree = vec![0usize; count];
    for &(_, b) in edges {
        indegree[b] += 1;
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..count).filter(|&v| indegree[v] == 0).collect();
    let mut out = Vec::with_capacity(count);
    while let Some(v) = ready.pop_first() {
        out.push(v);
        for &(_, b) in edges.iter().filter(|(a, _)| *a == v) {
            indegree[b] -= 1;
            if indegree[b] == 0 {
                ready.insert(b);
            }
        }
    }
    out
}

/// Orders layer `l` by the barycenter of each box's neighbours in the layers before
/// it (`down`) or after it; a box with none keeps its place.
fn reorder(
    order: &mut [Vec<usize>],
    l: usize,
    edges: &[(usize, usize)],
    layer: &[usize],
    down: bool,
) {
    let mut at: BTreeMap<usize, f64> = BTreeMap::new();
    for vs in order.iter() {
        for (i, &v) in vs.iter().enumerate() {
            at.insert(v, i as f64);
        }
    }
    let mut keyed: Vec<(f64, usize, usize)> = order[l]
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let near: Vec<f64> = edges
                .iter()
                .filter_map(|&(a, b)| match down {
                    true if b == v && layer[a] < l => at.get(&a).copied(),
                    false if a == v && layer[b] > l => at.get(&b).copied(),
                    _ => None,
                })
                .collect();
            let key = if near.is_empty() {
                i as f64
            } else {
                near.iter().sum::<f64>() / near.len() as f64
            };
            (key, i, v)
        })
        .collect();
    keyed.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    order[l] = keyed.into_iter().map(|(_, _, v)| v).collect();
}

/// The diagram as an inline `<svg>` element, every label escaped.
pub fn svg(l: &Layout) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"diagram\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"diagram\">",
        w = l.width,
        h = l.height
    );
    for a in &l.arrows {
        let d: Vec<String> = a
            .points
            .iter()
            .enumerate()
            .map(|(i, (x, y))| format!("{}{x} {y}", if i == 0 { "M" } else { "L" }))
            .collect();
        let _ = write!(
            s,
            "<path d=\"{}\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.5\"{}/>",
            d.join(" "),
            if a.back {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            }
        );
        if let [.., (px, py), (x, y)] = a.points[..] {
            // The head points the way the last segment runs.
            let head = if y > py {
                format!("{x},{y} {},{} {},{}", x - 5, y - 9, x + 5, y - 9)
            } else if y < py {
                format!("{x},{y} {},{} {},{}", x - 5, y + 9, x + 5, y + 9)
            } else if x >= px {
                format!("{x},{y} {},{} {},{}", x - 9, y - 5, x - 9, y + 5)
            } else {
                format!("{x},{y} {},{} {},{}", x + 9, y - 5, x + 9, y + 5)
            };
            let _ = write!(s, "<polygon points=\"{head}\" fill=\"#333\"/>");
        }
        if let (Some(label), [_, (x1, y1), (x2, y2), _]) = (&a.label, &a.points[..]) {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
                (x1 + x2) / 2,
                (y1 + y2) / 2 - 4,
                text(label)
            );
        }
    }
    for b in &l.boxes {
        let _ = write!(
            s,
            "<g><title>{t}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{BOX_H}\" rx=\"4\" fill=\"#fffdf6\" stroke=\"#222\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#111\">{t}</text></g>",
            b.x,
            b.y,
            b.w,
            b.x + b.w / 2,
            b.y + BOX_H / 2 + 4,
            t = text(&b.label)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests;
