//! The usage chart, drawn on the server as SVG: no chart library, no script, and the
//! labels are escaped like any text a journal may hold.

use std::fmt::Write as _;

use serde_json::Value;

const WIDTH: f64 = 640.0;
const ROW: f64 = 22.0;
const LABEL: f64 = 160.0;

/// A horizontal bar per row of `hall usage --by BY`'s reply, by list-price cost (or
/// tokens when nothing has a price).
pub fn usage(reply: &Value, by: &str) -> String {
    let rows: Vec<(String, f64, u64)> = reply["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let tokens = ["input", "output", "cache_read", "cache_write"]
                        .iter()
                        .filter_map(|k| r[*k].as_u64())
                        .sum();
                    (
                        r["key"].as_str().unwrap_or("").to_string(),
                        r["cost_usd"].as_f64().unwrap_or(0.0),
                        tokens,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let by_cost = rows.iter().any(|r| r.1 > 0.0);
    let value = |r: &(String, f64, u64)| if by_cost { r.1 } else { r.2 as f64 };
    let max = rows
        .iter()
        .map(value)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let height = ROW * (rows.len().max(1) as f64) + 30.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"usage by {}\">",
        escape(by)
    );
    let _ = write!(
        svg,
        "<text x=\"0\" y=\"14\" font-size=\"12\">{} by {}</text>",
        if by_cost {
            "list-price cost (USD)"
        } else {
            "tokens"
        },
        escape(by)
    );
    if rows.is_empty() {
        svg.push_str("<text x=\"0\" y=\"40\" font-size=\"12\">no recorded runs</text>");
    }
    for (i, r) in rows.iter().enumerate() {
        let y = 24.0 + ROW * i as f64;
        let w = (WIDTH - LABEL - 90.0) * value(r) / max;
        let shown = if by_cost {
            format!("${:.2}", r.1)
        } else {
            format!("{}", r.2)
        };
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{:.0}\" font-size=\"12\">{}</text><rect x=\"{LABEL}\" y=\"{:.0}\" width=\"{w:.1}\" height=\"{:.0}\" fill=\"#5b7db1\"/><text x=\"{:.1}\" y=\"{:.0}\" font-size=\"12\">{}</text>",
            y + 14.0,
            escape(&r.0),
            y + 3.0,
            ROW - 6.0,
            LABEL + w + 6.0,
            y + 14.0,
            escape(&shown)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Text as SVG/XML text: the five characters that could start markup, escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hostile_label_is_text_in_the_chart() {
        let reply = json!({"rows": [
            {"key": "<script>alert(1)</script>", "input": 10, "output": 5, "cache_read": 0, "cache_write": 0, "cost_usd": 0.5},
            {"key": "H-0002", "input": 1, "output": 1, "cache_read": 0, "cache_write": 0, "cost_usd": 0.25},
        ]});
        let svg = usage(&reply, "item");
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.contains("$0.50") && svg.contains("$0.25"));
        // The bars are to scale: the second is half the first.
        let widths: Vec<f64> = svg
            .match_indices("width=\"")
            .filter_map(|(i, _)| svg[i + 7..].split('"').next()?.parse().ok())
            .collect();
        assert_eq!(widths.len(), 2);
        assert!((widths[0] - 2.0 * widths[1]).abs() < 0.2, "{widths:?}");
    }

    #[test]
    fn no_runs_is_said_in_words() {
        assert!(usage(&json!({"rows": []}), "day").contains("no recorded runs"));
    }
}
