//! Code handed to an interpreter: what the strict guard can vouch for.
//!
//! A shell parser can't follow Python, JavaScript, Perl, Ruby or awk, and obfuscation
//! there is trivial (`'gi'+'t'`, `getattr(os, 'sys'+'tem')`, `chr(103)`). So the
//! question is turned around. Inline code (`python3 -c`, `node -e`, an awk program)
//! is readable only when everything it names is on a short list of harmless names:
//! printing, parsing JSON, arithmetic, reading stdin. Anything else (a module that can
//! run programs or write files, dynamic evaluation, attribute tricks) makes it
//! unreadable, which strict mode denies. `python3 -c 'print("release notes ready")'`
//! passes; `python3 -c "import os; os.system('git push')"` does not.
//!
//! Script files are judged more loosely, because test helpers legitimately start
//! processes: a script is unreadable when it can start a process or write a file *and*
//! names git, GitHub, a push, notes or a hook, or builds names at run time.

/// The interpreters whose inline code this module reads, by family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    Python,
    JavaScript,
    Perl,
    Ruby,
    Awk,
    Sed,
    /// Anything else that runs code (php, lua, tcl, R…): never vouched for.
    Other,
}

impl Lang {
    /// The family of an interpreter's program name.
    pub(super) fn of(program: &str) -> Option<Lang> {
        let base = program.rsplit('/').next().unwrap_or(program);
        let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match stem {
            "python" | "pypy" | "ipython" => Lang::Python,
            "node" | "nodejs" | "deno" | "bun" | "qjs" => Lang::JavaScript,
            "perl" => Lang::Perl,
            "ruby" | "irb" => Lang::Ruby,
            "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => Lang::Awk,
            "sed" | "gsed" => Lang::Sed,
            "php" | "lua" | "luajit" | "tclsh" | "wish" | "expect" | "Rscript" | "R" | "julia"
            | "pwsh" | "powershell" | "osascript" | "jshell" | "groovy" | "scala" | "kotlin"
            | "elixir" | "erl" | "escript" | "guile" | "racket" | "sbcl" | "clisp" | "ghci"
            | "runghc" | "swift" | "dotnet-script" | "nu" | "xonsh" | "elvish" | "rc" | "es" => {
                Lang::Other
            }
            _ => return None,
        })
    }
}

/// Identifiers inline Python may use, separated by blanks.
const PYTHON_OK: &str = "print len str int float bool list dict set tuple sorted reversed sum min max range \
     enumerate zip map filter abs round any all isinstance repr ord format True False \
     None import from as json sys re math datetime time collections itertools functools \
     textwrap statistics decimal fractions string argv stdin stdout stderr read readline \
     readlines write flush load loads dump dumps indent sort_keys get items keys values \
     split rsplit splitlines join strip lstrip rstrip replace upper lower startswith \
     endswith find count append extend pop update match search sub findall group groups \
     compile_flags for in if else elif and or not is lambda def return while break \
     continue pass try except finally with Exception KeyError ValueError sqrt floor ceil \
     pi now today isoformat strftime fromisoformat Counter defaultdict OrderedDict \
     most_common chain x y k v i j n s d l e line lines data obj key value item row text \
     name result total end sep file encoding f sys_argv exit version version_info \
     platform executable maxsize byteorder prefix implementation getdefaultencoding \
     isdigit isalpha zfill center ljust rjust title capitalize hex bin oct divmod pow";

/// Identifiers inline JavaScript may use, separated by blanks.
const JS_OK: &str = "console log error warn info JSON parse stringify Math Number String Boolean Array \
     Object keys values entries map filter reduce forEach join split trim length toString \
     toFixed includes startsWith endsWith replace slice indexOf push pop sort let const \
     var function return if else for of in new Date now toISOString true false null \
     undefined typeof process argv version versions platform arch exit stdout write \
     require fs readFileSync existsSync readdirSync statSync path resolve basename \
     dirname extname utf8 x y k v i j n s d e a b p pkg data obj key value item line \
     lines text name result dependencies devDependencies scripts floor ceil round max min \
     abs isArray parseInt parseFloat";

/// Perl and Ruby words that let code run programs, write files or evaluate text.
const PERL_RUBY_DANGER: &str = "system exec fork open sysopen qx readpipe eval do require use syscall unlink rename \
     link symlink mkdir rmdir chmod chown utime truncate spawn popen popen3 capture2 \
     capture3 File FileUtils IO Kernel send public_send instance_eval class_eval \
     const_get Dir Process Open3 PTY IPC binding load ObjectSpace Fiddle DynaLoader \
     XSLoader pack unpack chr sprintf sub lc uc reverse ENV STDIN";

/// Why inline `code` for `lang` can't be vouched for; `None` when it only uses harmless
/// names.
pub(super) fn inline_unreadable(lang: Lang, code: &str) -> Option<String> {
    match lang {
        Lang::Python => allowlist(code, PYTHON_OK, '#').or_else(|| python_extra(code)),
        Lang::JavaScript => allowlist(code, JS_OK, '/').or_else(|| js_extra(code)),
        Lang::Perl | Lang::Ruby => {
            if code.contains('`') {
                return Some("it has backticks, which run a command".to_owned());
            }
            let words = identifiers(code, '#');
            words
                .iter()
                .find(|w| listed(PERL_RUBY_DANGER, w))
                .map(|w| {
                    format!("it uses `{w}`, which can run programs, write files or build code")
                })
                .or_else(|| {
                    (code.contains("->") || code.contains("::") || code.contains('&'))
                        .then(|| "it calls methods or packages the guard can't follow".to_owned())
                })
        }
        Lang::Awk => super::awk_sed::awk_unreadable(code),
        Lang::Sed => super::awk_sed::sed_unreadable(code),
        Lang::Other => Some("the guard doesn't read this language".to_owned()),
    }
}

/// Why a script file can't be vouched for; `None` when it can't start programs or
/// write files, or does so without naming anything the gates care about.
pub(super) fn script_unreadable(lang: Lang, text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let runs = [
        "subprocess",
        "os.system",
        "os.popen",
        "os.exec",
        "os.spawn",
        "pty.",
        "popen",
        "child_process",
        "execsync",
        "spawnsync",
        "execfile",
        "system(",
        "exec(",
        "qx",
        "`",
        "open3",
        "process.binding",
        "deno.run",
        "deno.command",
        "bun.spawn",
        "shell_exec",
        "passthru",
        "proc_open",
        "runtime.getruntime",
        "processbuilder",
        "os/exec",
        "io.popen",
    ]
    .iter()
    .find(|w| lower.contains(*w));
    let writes = [
        "open(",
        ".write",
        "writefile",
        "appendfile",
        "copyfile",
        "shutil",
        "os.rename",
        "os.replace",
        "os.symlink",
        "os.link",
        "fs.",
        "file.open",
        "fileutils",
        "file_put_contents",
    ]
    .iter()
    .find(|w| lower.contains(*w));
    let words = identifiers(text, '#');
    let dynamic = [
        "eval",
        "exec",
        "getattr",
        "__import__",
        "importlib",
        "base64",
        "b64decode",
        "codecs",
        "chr",
        "fromCharCode",
        "decode",
        "rot13",
        "fromhex",
        "reverse",
        "reversed",
        "Function",
        "unhexlify",
        "pack",
        "unpack",
        "atob",
        "Buffer",
    ]
    .into_iter()
    .find(|w| words.iter().any(|x| x == w))
    .or_else(|| {
        ["\\x", "\\u00", "[::-1]"]
            .into_iter()
            .find(|w| lower.contains(*w))
    });
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    let mentions = [
        "git",
        "gh",
        "push",
        "notes",
        "hooks",
        "hookspath",
        "hallmark",
        "fsmonitor",
        "gitconfig",
    ]
    .into_iter()
    .find(|w| tokens.contains(w))
    .or_else(|| {
        [
            ".git/",
            "refs/",
            "packed-refs",
            "receive-pack",
            "send-pack",
            "update-ref",
        ]
        .into_iter()
        .find(|w| lower.contains(*w))
    });
    let _ = lang;
    match (runs.or(writes), mentions, dynamic) {
        (Some(cap), Some(name), None) => Some(format!(
            "the script can run programs or write files (`{cap}`) and mentions `{name}`"
        )),
        (Some(cap), _, Some(trick)) => Some(format!(
            "the script can run programs or write files (`{cap}`) and builds code or names at run time (`{trick}`)"
        )),
        _ => None,
    }
}

/// The identifiers of `code`, outside string literals and comments.
pub(super) fn identifiers(code: &str, comment: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = code.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == '\\' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if c == '"' || c == '\'' || c == '`' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            quote = Some(c);
            continue;
        }
        if c == comment && (comment != '/' || chars.peek() == Some(&'/')) {
            // A comment runs to the end of the line.
            for n in chars.by_ref() {
                if n == '\n' {
                    break;
                }
            }
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' || c == '$' {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.retain(|w| !w.chars().next().is_some_and(|c| c.is_ascii_digit()));
    out
}

/// Whether `word` is one of the blank-separated words of `list`.
fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// `None` when every identifier is on `ok`; else names the first that isn't.
fn allowlist(code: &str, ok: &str, comment: char) -> Option<String> {
    identifiers(code, comment)
        .into_iter()
        .find(|w| !listed(ok, w))
        .map(|w| format!("it uses `{w}`, which the guard can't vouch for"))
}

/// Python forms the identifier list can't see: computed attribute access through
/// subscripts of modules, and `open` in a write mode.
fn python_extra(code: &str) -> Option<String> {
    if code.contains("__") {
        return Some("it reaches into dunder attributes".to_owned());
    }
    None
}

/// JavaScript forms the identifier list can't see: computed member access and
/// template literals that run code.
fn js_extra(code: &str) -> Option<String> {
    let bytes = code.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        // `x["name"]` or `x[a+b]` after an identifier: a computed member.
        if *b == b'['
            && i > 0
            && (bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b')'
                || bytes[i - 1] == b']')
        {
            let rest = &code[i + 1..];
            let inner = rest.split(']').next().unwrap_or("");
            if !inner.chars().all(|c| c.is_ascii_digit() || c == ' ') {
                return Some("it reads a member by a computed name".to_owned());
            }
        }
    }
    if code.contains("${") {
        return Some("it has a template literal with code in it".to_owned());
    }
    if let Some(req) = code.find("require(") {
        let arg = code[req + 8..].trim_start();
        let name: String = arg
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| *c != '"' && *c != '\'' && *c != ')')
            .collect();
        let json_file = name.ends_with(".json") && !name.contains("..");
        if !matches!(name.as_str(), "fs" | "path" | "os" | "util") && !json_file {
            return Some(format!("it loads `{name}`"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmless_inline_code_is_readable() {
        assert_eq!(
            inline_unreadable(Lang::Python, "print(\"release notes ready\")"),
            None
        );
        assert_eq!(
            inline_unreadable(
                Lang::Python,
                "import json,sys; print(json.load(sys.stdin)['version'])"
            ),
            None
        );
        assert_eq!(
            inline_unreadable(Lang::JavaScript, "console.log(\"push\")"),
            None
        );
        assert_eq!(
            inline_unreadable(
                Lang::JavaScript,
                "console.log(require('./package.json').version)"
            ),
            None
        );
        assert_eq!(inline_unreadable(Lang::Awk, "{ print $1 }"), None);
        assert_eq!(
            inline_unreadable(Lang::Awk, "$3 > 10 && /x/ { n++ } END { print n }"),
            None,
            "a comparison is not a redirect"
        );
        assert_eq!(inline_unreadable(Lang::Sed, "s/foo/bar/g"), None);
        assert_eq!(inline_unreadable(Lang::Sed, "1,5d; /x/p"), None);
    }

    #[test]
    fn code_that_can_run_or_write_is_not() {
        for (lang, code) in [
            (Lang::Python, "import os; os.system('git push')"),
            (
                Lang::Python,
                "import subprocess as s; s.run(['gi'+'t','pu'+'sh'])",
            ),
            (
                Lang::Python,
                "getattr(__import__('o'+'s'),'sys'+'tem')('x')",
            ),
            (
                Lang::Python,
                "open('.git/hooks/post-commit','w').write('x')",
            ),
            (
                Lang::JavaScript,
                "require('child_process').execSync('git push')",
            ),
            (Lang::JavaScript, "process['binding']('spawn_sync')"),
            (Lang::JavaScript, "const c=require('child'+'_process')"),
            (Lang::Perl, "system('git','push')"),
            (Lang::Perl, "`git push`"),
            (Lang::Ruby, "Kernel.send(:system, 'git push')"),
            (Lang::Awk, "BEGIN { system(\"git push\") }"),
            (Lang::Awk, "BEGIN { print | \"sh\" }"),
            (Lang::Awk, "{ print > \".git/hooks/post-commit\" }"),
            (Lang::Sed, "1e git push"),
            (Lang::Sed, "s/.*/git push/e"),
            (Lang::Sed, "w .git/hooks/post-commit"),
            (Lang::Other, "exec git push"),
        ] {
            assert!(inline_unreadable(lang, code).is_some(), "{lang:?} {code}");
        }
    }

    #[test]
    fn scripts_are_judged_by_capability_and_names() {
        assert!(
            script_unreadable(
                Lang::Python,
                "import subprocess\nsubprocess.run(['pytest'])\n"
            )
            .is_none()
        );
        assert!(
            script_unreadable(
                Lang::Python,
                "import subprocess\nsubprocess.run(['git','push'])\n"
            )
            .is_some()
        );
        assert!(
            script_unreadable(
                Lang::Python,
                "import os\nos.system(''.join(map(chr,[103,105,116])))\n"
            )
            .is_some()
        );
        assert!(script_unreadable(Lang::Python, "print('hello')\n").is_none());
    }

    #[test]
    fn languages_by_program_name() {
        assert_eq!(Lang::of("python3"), Some(Lang::Python));
        assert_eq!(Lang::of("/usr/bin/python3.11"), Some(Lang::Python));
        assert_eq!(Lang::of("node"), Some(Lang::JavaScript));
        assert_eq!(Lang::of("gawk"), Some(Lang::Awk));
        assert_eq!(Lang::of("tclsh"), Some(Lang::Other));
        assert_eq!(Lang::of("cargo"), None);
    }
}
