//! The page itself: one HTML document with its style inline, no script, and a
//! Content-Security-Policy that lets it load nothing but its own stylesheet and the
//! `data:` images it carries.

use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::diagram;
use super::escape::{base64, dollars, text};
use super::facts::{Facts, Round};
use super::plates;
use super::words::{GazetteWords, Words};
use crate::item::ItemId;
use crate::item::outcome::Outcome;

/// The stylesheet: a newspaper page on screen, plain black on white on paper. Its
/// hash is in the policy, so no other style (injected or not) applies.
const CSS: &str = "\
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;background:#e9e4d8;color:#1a1a1a;font:16px/1.5 Georgia,'Times New Roman',serif;overflow-wrap:anywhere;word-break:normal}
.paper{max-width:62rem;margin:1.5rem auto;padding:1.5rem 2rem 1rem;background:#fffdf6;box-shadow:0 1px 4px rgba(0,0,0,.25)}
.masthead{text-align:center;border-bottom:3px double #1a1a1a;padding-bottom:.4rem;margin-bottom:1rem}
.flag{font-size:2.4rem;font-weight:bold;letter-spacing:.04em;margin:0;font-variant:small-caps}
.dateline{margin:.2rem 0 0;font-size:.85rem;text-transform:uppercase;letter-spacing:.08em;border-top:1px solid #1a1a1a;padding-top:.2rem}
h1{font-size:2.2rem;line-height:1.15;margin:.4rem 0 .8rem;text-align:center}
h2{font-size:1.05rem;text-transform:uppercase;letter-spacing:.08em;border-bottom:1px solid #1a1a1a;margin:1.4rem 0 .5rem}
.story{columns:2 20rem;column-gap:2rem;column-rule:1px solid #cfc8b8}
.story p{margin:0 0 .8rem;white-space:pre-line;text-align:justify;hyphens:auto}
.story p:first-child::first-letter{float:left;font-size:3.1rem;line-height:.9;padding:.2rem .3rem 0 0}
.nostory{font-style:italic;color:#555}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0}
dl.facts dt{font-weight:bold}
dl.facts dd{margin:0;min-width:0}
code,.sha{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.85em}
ol.rounds,ul.findings{padding-left:1.4rem;margin:0}
ol.rounds li,ul.findings li{margin-bottom:.5rem}
.pass{color:#1d5e20}.fail{color:#8a1c1c}
.finding-head{font-weight:bold}
.fate{font-style:italic;color:#444}
.diagram-box{overflow-x:auto}
svg.diagram{max-width:100%;height:auto;font-family:Georgia,serif}
figure.plate{margin:0 0 1rem;padding:.5rem;border:1px solid #cfc8b8;break-inside:avoid}
figure.plate img{max-width:100%;height:auto;display:block;margin:0 auto}
figcaption{font-style:italic;font-size:.9rem;margin-top:.3rem;text-align:center}
footer{margin-top:1.5rem;border-top:1px solid #1a1a1a;font-size:.8rem;color:#444;padding-top:.3rem}
footer p{margin:.2rem 0}
@media print{
@page{margin:16mm}
body{background:#fff;font-size:11pt}
.paper{box-shadow:none;margin:0;max-width:none;padding:0;background:#fff}
a{color:inherit;text-decoration:none}
section,figure,li{break-inside:avoid}
.story{column-rule:none}
}
";

/// The Content-Security-Policy: nothing may be fetched, framed, submitted or run; the
/// one stylesheet (by its hash) and `data:` images are all that load.
pub fn policy() -> String {
    let hash = base64(&Sha256::digest(CSS.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'"
    )
}

/// What the renderer needs besides the facts.
pub struct Sheet<'a> {
    pub id: ItemId,
    pub facts: &'a Facts,
    pub words: &'a Words,
    /// The stamp the page records (see `super::stamp`).
    pub stamp: &'a str,
    /// Where the plates' copies are.
    pub plates_dir: &'a Path,
    pub events: usize,
}

/// The whole page.
pub fn render(sheet: &Sheet<'_>) -> String {
    let f = sheet.facts;
    let words = sheet.words.found();
    let title = if f.item.title.trim().is_empty() {
        sheet.id.to_string()
    } else {
        f.item.title.clone()
    };
    let headline = words.map_or(title.as_str(), |w| w.headline.as_str());
    let mut s = String::with_capacity(16 * 1024);
    s.push_str("<!DOCTYPE html>\n");
    let _ = writeln!(s, "<!-- {} -->", sheet.stamp);
    s.push_str("<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        s,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        policy()
    );
    s.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(s, "<title>{}: {}</title>", sheet.id, text(headline));
    let _ = writeln!(
        s,
        "<style>{CSS}</style>\n</head>\n<body>\n<main class=\"paper\">"
    );
    let _ = writeln!(
        s,
        "<header class=\"masthead\"><p class=\"flag\">The Hallmark Gazette</p><p class=\"dateline\">{} · {} · {}</p></header>",
        sheet.id,
        text(f.item.state.as_str()),
        text(f.item.state.station())
    );
    let _ = writeln!(s, "<article>\n<h1>{}</h1>", text(headline));
    s.push_str(&story(words));
    s.push_str(&facts_block(sheet.id, f, &title));
    s.push_str(&rounds(&f.rounds));
    s.push_str(&findings(f, words));
    if let Some(outline) = words.and_then(|w| w.diagram.as_ref()) {
        s.push_str(&diagram_section(outline));
    }
    if !f.plates.is_empty() {
        s.push_str("<section><h2>Plates</h2>\n");
        s.push_str(&plates::render(&f.plates, sheet.plates_dir));
        s.push_str("</section>\n");
    }
    s.push_str("</article>\n<footer>\n");
    let _ = writeln!(
        s,
        "<p>Printed by Hallmark {} (renderer {}) from {} journal events. Every date, commit, check and cost here is the journal's; the headline and the story are the librarian's.</p>",
        env!("CARGO_PKG_VERSION"),
        super::RENDERER,
        sheet.events
    );
    if let Words::Invalid(why) = sheet.words {
        let _ = writeln!(
            s,
            "<p>The words file ({}) was not used: {}.</p>",
            super::words::WORDS_FILE,
            text(why)
        );
    }
    s.push_str("</footer>\n</main>\n</body>\n</html>\n");
    s
}

fn story(words: Option<&GazetteWords>) -> String {
    let Some(w) = words.filter(|w| !w.story.trim().is_empty()) else {
        return "<div class=\"story\"><p class=\"nostory\">The librarian has not written this item's story yet.</p></div>\n".to_string();
    };
    let mut s = String::from("<div class=\"story\">");
    for para in w
        .story
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let _ = write!(s, "<p>{}</p>", text(para));
    }
    s.push_str("</div>\n");
    s
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn short(sha: &str) -> String {
    text(&sha.chars().take(7).collect::<String>())
}

fn facts_block(id: ItemId, f: &Facts, title: &str) -> String {
    let when = |t: Option<&String>| t.map_or_else(|| "not yet".to_string(), |t| text(t));
    let mut rows: Vec<(&str, String)> = vec![
        ("Item", id.to_string()),
        ("Title", text(title)),
        ("Branch", format!("<code>{}</code>", text(&f.item.branch))),
        ("Base", format!("<code>{}</code>", text(&f.item.base))),
        ("Created", text(&f.created)),
        ("Hallmarked", when(f.hallmarked.as_ref().map(|h| &h.0))),
        ("Shipped", when(f.shipped.as_ref())),
    ];
    match (&f.merged, &f.closed_unmerged) {
        (Some(t), _) => rows.push(("Merged", text(t))),
        (None, Some(t)) => rows.push(("Merged", format!("no: closed without merging {}", text(t)))),
        (None, None) => rows.push(("Merged", "not yet".to_string())),
    }
    if let Some((_, sha)) = &f.hallmarked {
        rows.push((
            "Hallmarked commit",
            format!("<span class=\"sha\">{}</span>", text(sha)),
        ));
    }
    if let Some(pr) = &f.item.pr {
        rows.push(("Pull request", text(pr)));
    }
    rows.push(("Rounds", f.rounds.len().to_string()));
    let (tokens, usd) = f.total();
    rows.push((
        "Cost",
        format!("{} for {} tokens", dollars(usd), grouped(tokens)),
    ));
    for (role, sp) in &f.spend {
        rows.push((
            "",
            format!(
                "{}: {} in, {} out, {} cache; {} over {} run{}",
                text(role),
                grouped(sp.input),
                grouped(sp.output),
                grouped(sp.cache),
                dollars(sp.cost_usd),
                sp.runs,
                if sp.runs == 1 { "" } else { "s" }
            ),
        ));
    }
    let mut s = String::from("<section><h2>The facts</h2>\n<dl class=\"facts\">\n");
    for (k, v) in rows {
        let _ = writeln!(s, "<dt>{k}</dt><dd>{v}</dd>");
    }
    s.push_str("</dl>\n</section>\n");
    s
}

fn rounds(rounds: &[Round]) -> String {
    let mut s = String::from("<section><h2>Round by round</h2>\n");
    if rounds.is_empty() {
        s.push_str("<p>No round yet: the item has not been sent to review.</p>\n</section>\n");
        return s;
    }
    s.push_str("<ol class=\"rounds\">\n");
    for r in rounds {
        let checks = match r.checks_passed {
            Some(true) => "<span class=\"pass\">checks passed</span>".to_string(),
            Some(false) => "<span class=\"fail\">checks failed</span>".to_string(),
            None => "checks not finished".to_string(),
        };
        let names: Vec<String> = r
            .checks
            .iter()
            .map(|c| {
                format!(
                    "<code>{}</code> <span class=\"{}\">{}</span>",
                    text(&c.check),
                    if c.passed { "pass" } else { "fail" },
                    if c.passed { "passed" } else { "failed" }
                )
            })
            .collect();
        let checks = if names.is_empty() {
            checks
        } else {
            format!("{checks} ({})", names.join(", "))
        };
        let verdict = match &r.verdict {
            None => "no verdict".to_string(),
            Some(v) => format!(
                "{}, {} finding{}{}",
                if v.approved {
                    "approved"
                } else {
                    "changes requested"
                },
                v.findings,
                if v.findings == 1 { "" } else { "s" },
                match v.by.as_deref() {
                    Some("you") => " (a person's verdict)",
                    Some("carried") => " (carried across a rebase)",
                    _ => "",
                }
            ),
        };
        let fix = r
            .fix
            .as_deref()
            .map(|f| format!("; answered by fix <span class=\"sha\">{}</span>", short(f)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "<li>Round {} at <span class=\"sha\">{}</span>: {checks}; {verdict}{fix}.</li>",
            r.n,
            short(&r.sha)
        );
    }
    s.push_str("</ol>\n</section>\n");
    s
}

fn findings(f: &Facts, words: Option<&GazetteWords>) -> String {
    if f.findings.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section><h2>What the review found</h2>\n<ul class=\"findings\">\n");
    for x in &f.findings {
        let fd = &x.finding;
        let plain = words.and_then(|w| w.findings.get(&fd.id));
        let body = plain.map_or(fd.scenario.as_str(), String::as_str);
        let fate = match &x.outcome {
            Outcome::Fixed { sha } => format!("Fixed in <code>{}</code>.", text(sha.short())),
            Outcome::DisputeUpheld { reason } => {
                format!("Disputed by the fixer, and let go: {}", text(reason))
            }
            Outcome::DisputeRejected { reason } => {
                format!(
                    "Disputed by the fixer ({}), and raised again.",
                    text(reason)
                )
            }
            Outcome::Dropped => "Not raised again.".to_string(),
            Outcome::Open => "Still open.".to_string(),
        };
        let _ = writeln!(
            s,
            "<li><span class=\"finding-head\">{} ({}, {}) in <code>{}</code>, round {}</span><br>{}<br><span class=\"fate\">{fate}</span></li>",
            text(&fd.id),
            fd.severity,
            text(fd.lens.title()),
            text(&fd.location()),
            x.round,
            text(body)
        );
    }
    s.push_str("</ul>\n</section>\n");
    s
}

fn diagram_section(outline: &super::words::Outline) -> String {
    let l = diagram::layout(outline);
    let mut s = String::from("<section><h2>How it fits together</h2>\n<div class=\"diagram-box\">");
    s.push_str(&diagram::svg(&l));
    s.push_str("</div>\n");
    if l.cut > 0 {
        let _ = writeln!(
            s,
            "<p class=\"fate\">{} more box{} left out: the diagram shows at most {}.</p>",
            l.cut,
            if l.cut == 1 { " was" } else { "es were" },
            diagram::MAX_NODES
        );
    }
    if l.dropped > 0 {
        let _ = writeln!(
            s,
            "<p class=\"fate\">{} arrow{} left out (to a box that isn't drawn, to itself, repeated, or past {}).</p>",
            l.dropped,
            if l.dropped == 1 { " was" } else { "s were" },
            diagram::MAX_EDGES
        );
    }
    s.push_str("</section>\n");
    s
}
