//! Plates: the files and links attached to an item (`hall attach`), as the page shows
//! them. An image is embedded in the page as a `data:` URI, so the page stays one file
//! that reads the same wherever it is copied; any other file is a relative link to its
//! copy under `plates/`, with its size. A link is a link a person may click: the page
//! never fetches it.

use std::fmt::Write as _;
use std::path::Path;

use super::escape::{base64, text};
use super::facts::Plate;

/// The largest file `hall attach` takes, and the largest image the page embeds.
pub const MAX_PLATE_BYTES: u64 = 5 * 1024 * 1024;

/// The directory of an item's plates, under its journal directory.
pub const PLATES_DIR: &str = "plates";

/// An image kind the page embeds, told by the file's first bytes (and, for SVG, which
/// has no magic number, by its name and its start).
pub fn image_kind(name: &str, bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some("image/png");
    }
    if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        return Some("image/jpeg");
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    let svg_name = name.to_ascii_lowercase().ends_with(".svg");
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    if svg_name && head.contains("<svg") {
        return Some("image/svg+xml");
    }
    None
}

/// Whether `url` is a link the page may carry: http or https, nothing that could
/// break out of an attribute or hide in whitespace.
pub fn is_link(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && url.len() <= 2048
        && url.len() > "http://".len()
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "\"'<>`\\".contains(c))
}

/// A size as people read it.
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// The plates section's figures, reading each copy from `plates`.
pub fn render(plates: &[Plate], dir: &Path) -> String {
    let mut s = String::new();
    for p in plates {
        let caption = p.caption.as_deref().map(text).unwrap_or_default();
        s.push_str("<figure class=\"plate\">");
        match (&p.file, &p.url) {
            (_, Some(url)) if is_link(url) => {
                let _ = write!(
                    s,
                    "<p class=\"link\">Link: <a href=\"{u}\" rel=\"noreferrer noopener\">{u}</a></p>",
                    u = text(url)
                );
            }
            (_, Some(url)) => {
                let _ = write!(
                    s,
                    "<p class=\"link\">Link (not http or https, so not linked): {}</p>",
                    text(url)
                );
            }
            (Some(file), None) => s.push_str(&file_plate(p, file, dir)),
            (None, None) => s.push_str("<p>A plate with neither a file nor a link.</p>"),
        }
        if !caption.is_empty() {
            let _ = write!(s, "<figcaption>{caption}</figcaption>");
        }
        s.push_str("</figure>\n");
    }
    s
}

/// A file plate: the image itself when it is one, else a link to the copy.
fn file_plate(p: &Plate, file: &str, dir: &Path) -> String {
    // A name from the journal is only ever one plain file name under `plates/`.
    let plain = !file.is_empty()
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && !file.starts_with('.');
    if !plain {
        return format!(
            "<p>A plate named {}, which is not a plate's name.</p>",
            text(file)
        );
    }
    let path = dir.join(file);
    let bytes = match std::fs::metadata(&path) {
        Ok(m) if m.len() <= MAX_PLATE_BYTES => std::fs::read(&path).ok(),
        _ => None,
    };
    match bytes
        .as_deref()
        .and_then(|b| image_kind(file, b).map(|k| (k, b)))
    {
        Some((kind, b)) => format!(
            "<img src=\"data:{kind};base64,{}\" alt=\"{}\">",
            base64(b),
            text(p.caption.as_deref().unwrap_or(&p.from))
        ),
        None => {
            let missing = if path.is_file() {
                ""
            } else {
                " (the copy is missing)"
            };
            format!(
                "<p class=\"file\">File: <a href=\"{PLATES_DIR}/{f}\">{f}</a>, {}{missing}</p>",
                size(p.bytes),
                f = text(file)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_told_by_their_bytes() {
        assert_eq!(
            image_kind("x.bin", b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(image_kind("x.png", b"not a png"), None);
        assert_eq!(
            image_kind("a.jpg", &[0xff, 0xd8, 0xff, 0xe0]),
            Some("image/jpeg")
        );
        assert_eq!(image_kind("a.gif", b"GIF89a..."), Some("image/gif"));
        assert_eq!(
            image_kind("a.webp", b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(
            image_kind("a.SVG", b"<?xml?>\n<svg xmlns=''/>"),
            Some("image/svg+xml")
        );
        assert_eq!(image_kind("a.txt", b"<svg/>"), None);
    }

    #[test]
    fn only_plain_http_links_are_links() {
        assert!(is_link("https://example.com/a?b=c#d"));
        assert!(is_link("HTTP://example.com"));
        for bad in [
            "javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "https://x\" onmouseover=\"y",
            "https://a b",
            "http://",
            "//example.com",
        ] {
            assert!(!is_link(bad), "{bad}");
        }
    }

    #[test]
    fn an_svg_plate_is_an_img_never_inline() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("1-x.svg"),
            "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
        )
        .unwrap();
        let html = render(
            &[Plate {
                file: Some("1-x.svg".into()),
                url: None,
                caption: Some("<b>c</b>".into()),
                bytes: 70,
                from: "x.svg".into(),
            }],
            dir.path(),
        );
        assert!(
            html.contains("<img src=\"data:image/svg+xml;base64,"),
            "{html}"
        );
        assert!(
            !html.contains("<svg") && !html.contains("<script"),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;c&lt;/b&gt;"), "{html}");
    }

    #[test]
    fn other_files_are_links_with_their_size_and_odd_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("2-notes.txt"), "hello").unwrap();
        let plate = |file: &str| Plate {
            file: Some(file.into()),
            url: None,
            caption: None,
            bytes: 5,
            from: "notes.txt".into(),
        };
        let html = render(&[plate("2-notes.txt")], dir.path());
        assert!(
            html.contains("<a href=\"plates/2-notes.txt\">2-notes.txt</a>, 5 bytes"),
            "{html}"
        );
        let html = render(&[plate("../../etc/passwd")], dir.path());
        assert!(!html.contains("href"), "{html}");
        let html = render(&[plate("3-gone.txt")], dir.path());
        assert!(html.contains("the copy is missing"), "{html}");
    }
}
