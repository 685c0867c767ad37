//! What archivers and compressors (`tar`, `unzip`, `7z`, `gzip`…) write: the archive a
//! create makes, the directory an extraction fills, and a decompressor's output.

use crate::Effect;
use crate::shell::Walker;
use crate::words::Arg;

impl Walker<'_> {
    /// Archives: the archive file a create writes, and where an extraction writes
    /// (`-C DIR`, `-d DIR`, `-oDIR`, else here). An extraction's member names are not in
    /// the text, so it is an [`Effect::Extract`]; a decompressor writes its operand less
    /// the suffix.
    pub(super) fn archive_args(&mut self, name: &str, args: &[Arg]) {
        let mut dir: Option<Arg> = None;
        let mut file: Option<Arg> = None;
        let mut operands: Vec<&Arg> = Vec::new();
        let mut extract = false;
        let mut listing = false;
        let mut to_stdout = false;
        let mut anywhere = false;
        let mut no_absolute = false;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            i += 1;
            let t = a.text.as_str();
            // tar's first word may be its old-style bundle of letters (`tar xzf a.tgz`).
            let bundle = i == 1
                && matches!(name, "tar" | "bsdtar" | "ar" | "pax")
                && !t.starts_with('-')
                && !a.dynamic;
            let tarlike = matches!(name, "tar" | "bsdtar");
            let compressor = matches!(
                name,
                "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd"
            );
            match t {
                "-C" | "--directory" if tarlike => {
                    dir = args.get(i).cloned();
                    i += 1;
                }
                "-d" if name == "unzip" => {
                    dir = args.get(i).cloned();
                    i += 1;
                }
                "-D" | "--directory" if name == "cpio" => {
                    dir = args.get(i).cloned();
                    i += 1;
                }
                "-f" | "--file" | "-F" if !compressor && name != "zip" && name != "unzip" => {
                    file = args.get(i).cloned();
                    i += 1;
                }
                "-x" | "--extract" | "--get" if tarlike => extract = true,
                "-i" | "--extract" | "-p" | "--pass-through" if name == "cpio" => extract = true,
                "-r" if name == "pax" => extract = true,
                "-l" | "-t" | "-Z" | "-v" if name == "unzip" => listing = true,
                "-t" | "--list" if tarlike => listing = true,
                "-p" | "-c" if name == "unzip" => to_stdout = true,
                "-O" | "--to-stdout" if tarlike => to_stdout = true,
                "-c" | "--stdout" | "--to-stdout" | "-t" | "--test" | "-l" | "--list"
                    if compressor =>
                {
                    to_stdout = true
                }
                "-P" | "--absolute-names" | "--insecure" if tarlike => anywhere = true,
                "--no-absolute-filenames" => no_absolute = true,
                _ => {
                    if let Some(d) = t.strip_prefix("--directory=") {
                        dir = Some(Arg {
                            text: d.to_owned(),
                            dynamic: a.dynamic,
                        });
                    } else if let Some(f) = t.strip_prefix("--file=") {
                        file = Some(Arg {
                            text: f.to_owned(),
                            dynamic: a.dynamic,
                        });
                    } else if (name == "7z" || name == "7za") && t.starts_with("-o") {
                        dir = Some(Arg {
                            text: t[2..].to_owned(),
                            dynamic: a.dynamic,
                        });
                    } else if (tarlike || matches!(name, "ar" | "cpio" | "pax"))
                        && (bundle || (t.starts_with('-') && !t.starts_with("--") && t.len() > 1))
                    {
                        let letters = t.trim_start_matches('-');
                        let takes_file = tarlike
                            && (bundle && letters.contains('f')
                                || !bundle && letters.ends_with('f'));
                        for c in letters.chars() {
                            match (name, c) {
                                ("tar" | "bsdtar" | "ar", 'x') => extract = true,
                                ("tar" | "bsdtar" | "ar", 't') => listing = true,
                                ("tar" | "bsdtar", 'O') | ("ar", 'p') => to_stdout = true,
                                ("tar" | "bsdtar", 'P') => anywhere = true,
                                ("cpio", 'i' | 'p') | ("pax", 'r') => extract = true,
                                _ => {}
                            }
                        }
                        if takes_file {
                            file = args.get(i).cloned();
                            i += 1;
                        }
                    } else if compressor && t.starts_with('-') && !t.starts_with("--") {
                        if t.contains('c') || t.contains('t') || t.contains('l') {
                            to_stdout = true;
                        }
                    } else if !t.starts_with('-') || a.dynamic {
                        operands.push(a);
                    }
                }
            }
        }
        match name {
            "unzip" => extract = !listing && !to_stdout,
            "7z" | "7za" => {
                extract = matches!(operands.first().map(|a| a.text.as_str()), Some("x" | "e"));
                if extract {
                    operands.remove(0);
                }
            }
            "ar" => extract = extract && !listing,
            "cpio" => anywhere = extract && !no_absolute,
            "pax" => anywhere = extract,
            _ => {}
        }
        if matches!(
            name,
            "gunzip" | "gzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd"
        ) {
            // `gunzip x.gz` writes `x`; `gzip x` writes `x.gz`.
            for a in &operands {
                let out = [".gz", ".bz2", ".xz", ".zst", ".tgz", ".z"]
                    .iter()
                    .find_map(|s| a.text.strip_suffix(s))
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("{}.gz", a.text));
                self.use_path(a, name, false);
                if !to_stdout {
                    self.write_to(
                        &Arg {
                            text: out,
                            dynamic: a.dynamic,
                        },
                        &format!("`{name}` writes"),
                    );
                }
            }
            return;
        }
        let place_dir = dir.clone().unwrap_or_else(|| Arg::lit("."));
        if extract && !to_stdout {
            self.write_to(&place_dir, &format!("`{name}` extracts into"));
            self.found(Effect::Extract {
                dir: place_dir,
                place: self.place.clone(),
                how: format!("`{name}` extracts an archive into"),
                anywhere,
            });
        } else if !listing && !to_stdout {
            // Creating: the archive file (`-f`, or the first operand of `zip`/`7z a`/`ar`).
            match (&file, name) {
                (Some(f), _) => self.write_to(f, &format!("`{name}` writes")),
                (None, "zip" | "7z" | "7za" | "ar") => {
                    if let Some(f) = operands
                        .iter()
                        .find(|a| !matches!(a.text.as_str(), "a" | "u" | "d"))
                    {
                        self.write_to(f, &format!("`{name}` writes"));
                    }
                }
                _ => {}
            }
        }
        if let Some(f) = file.filter(|_| extract || listing) {
            self.use_path(&f, name, true);
        }
        for a in operands {
            self.use_path(a, name, true);
        }
    }
}
