use super::*;
use crate::gazette::words::{Edge, Node};

fn outline(nodes: &[&str], edges: &[(&str, &str)]) -> Outline {
    Outline {
        nodes: nodes
            .iter()
            .map(|n| Node {
                id: n.to_string(),
                label: format!("box {n}"),
            })
            .collect(),
        edges: edges
            .iter()
            .map(|(a, b)| Edge {
                from: a.to_string(),
                to: b.to_string(),
                label: None,
            })
            .collect(),
    }
}

fn layer_of(l: &Layout, label: &str) -> usize {
    l.boxes
        .iter()
        .find(|b| b.label == label)
        .map(|b| b.layer)
        .unwrap_or_else(|| panic!("no box {label}"))
}

#[test]
fn layers_follow_the_longest_path() {
    // a→b→c and a→c: c sits after b, not next to a.
    let l = layout(&outline(
        &["a", "b", "c", "d"],
        &[("a", "b"), ("b", "c"), ("a", "c")],
    ));
    assert_eq!(
        ["box a", "box b", "box c", "box d"].map(|n| layer_of(&l, n)),
        [0, 1, 2, 0]
    );
    // Every forward arrow starts at its box's right edge and ends at the next box's left.
    for a in &l.arrows {
        assert!(!a.back);
        let (first, last) = (a.points[0], a.points[a.points.len() - 1]);
        assert!(first.0 < last.0, "{a:?}");
    }
    // Boxes in a layer don't overlap.
    for x in &l.boxes {
        for y in &l.boxes {
            if x.label != y.label && x.layer == y.layer {
                assert!(x.y + BOX_H <= y.y || y.y + BOX_H <= x.y, "{x:?} {y:?}");
            }
        }
    }
}

#[test]
fn boxes_are_as_wide_as_their_labels() {
    let mut o = outline(&["a", "b"], &[("a", "b")]);
    o.nodes[1].label = "a much longer label than the first".into();
    let l = layout(&o);
    assert!(l.boxes[1].w > l.boxes[0].w);
    assert_eq!(l.boxes[0].w, "box a".len() as i64 * CHAR_W + 2 * PAD_X);
    assert!(l.width >= l.boxes.iter().map(|b| b.x + b.w).max().unwrap());
}

#[test]
fn a_cycle_is_broken_and_drawn_back() {
    let l = layout(&outline(
        &["a", "b", "c"],
        &[("a", "b"), ("b", "c"), ("c", "a")],
    ));
    assert_eq!(
        ["box a", "box b", "box c"].map(|n| layer_of(&l, n)),
        [0, 1, 2]
    );
    let back: Vec<bool> = l.arrows.iter().map(|a| a.back).collect();
    assert_eq!(back, [false, false, true]);
    // The arrow back runs below every box.
    let lowest = l.boxes.iter().map(|b| b.y + BOX_H).max().unwrap();
    assert!(l.arrows[2].points[1].1 > lowest);
    assert!(l.height > l.arrows[2].points[1].1);
}

#[test]
fn a_dense_cyclic_graph_ends_and_is_capped() {
    let ids: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut edges = Vec::new();
    for a in &refs {
        for b in &refs {
            edges.push((*a, *b));
        }
    }
    let l = layout(&outline(&refs, &edges));
    assert_eq!(l.boxes.len(), MAX_NODES);
    assert_eq!(l.cut, 40 - MAX_NODES);
    // Self-loops, edges to cut boxes and those past the cap are dropped.
    assert_eq!(l.arrows.len(), MAX_EDGES);
    assert_eq!(l.dropped, 40 * 40 - MAX_EDGES);
}

#[test]
fn edges_to_unknown_boxes_and_duplicate_ids_are_left_out() {
    let mut o = outline(
        &["a", "a", "b"],
        &[("a", "b"), ("a", "zz"), ("b", "b"), ("a", "b")],
    );
    o.nodes[1].label = "second a".into();
    let l = layout(&o);
    assert_eq!(l.boxes.len(), 2);
    assert_eq!(l.boxes[0].label, "box a");
    assert_eq!((l.arrows.len(), l.dropped), (1, 3));
}

#[test]
fn barycenters_untangle_crossed_edges() {
    // a→d, b→c drawn in input order would cross; after ordering, they don't.
    let l = layout(&outline(&["a", "b", "c", "d"], &[("a", "d"), ("b", "c")]));
    let y = |n: &str| l.boxes.iter().find(|b| b.label == n).unwrap().y;
    assert_eq!(y("box a") < y("box b"), y("box d") < y("box c"));
}

#[test]
fn the_same_outline_gives_the_same_bytes_and_labels_are_escaped() {
    let mut o = outline(&["a", "b"], &[("a", "b")]);
    o.nodes[0].label = "</svg><script>alert(1)</script>".into();
    o.edges[0].label = Some("\"on\" & <off>".into());
    let one = svg(&layout(&o));
    assert_eq!(one, svg(&layout(&o.clone())));
    assert!(!one.contains("<script"), "{one}");
    assert!(one.contains("&lt;/svg&gt;&lt;script&gt;"), "{one}");
    assert!(one.contains("&quot;on&quot; &amp; &lt;off&gt;"), "{one}");
    assert_eq!(one.matches("<svg").count(), 1);
    assert_eq!(one.matches("</svg>").count(), 1);
}

#[test]
fn an_empty_outline_is_an_empty_drawing() {
    let l = layout(&Outline::default());
    assert!(l.boxes.is_empty() && l.arrows.is_empty());
    assert!(l.width > 0 && l.height > 0);
}
