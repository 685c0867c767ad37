//! What a command writes and reads, and the variables it sets: the walker's record of
//! paths (judged by the gates) and of values later words may expand to.

use super::{Walker, join_args};
use crate::Effect;
use crate::words::Arg;

impl Walker<'_> {
    /// Records a file the command writes: the gates judge the path, and a script run
    /// later in the same command is known to be this one's output.
    pub(crate) fn write_to(&mut self, path: &Arg, how: &str) {
        if path.text.contains("refs/notes") {
            self.found(Effect::NoteWrite {
                how: format!("writes the file {}", path.text),
            });
        }
        if !path.dynamic && is_device(&path.text) {
            return;
        }
        let key = self.written_key(&path.text);
        self.written.insert(key.clone(), None);
        self.last_writes.push(key);
        self.found(Effect::FileWrite {
            path: path.clone(),
            place: self.place.clone(),
            how: how.to_owned(),
        });
    }

    /// A path handed to a program: judged by what it is (a secret, git's internals…).
    pub(crate) fn use_path(&mut self, path: &Arg, program: &str, reader: bool) {
        if !path.dynamic && is_device(&path.text) {
            return;
        }
        self.found(Effect::PathUse {
            path: path.clone(),
            place: self.place.clone(),
            program: program.to_owned(),
            reader,
        });
    }

    /// The key a written file is remembered by: its path from the session's directory.
    pub(crate) fn written_key(&self, path: &str) -> String {
        let joined = crate::place::join(self.place.dir.as_deref(), path);
        joined.trim_start_matches("./").replace("/./", "/")
    }

    pub(crate) fn set_var(&mut self, name: &str, value: &Arg) {
        if name == "IFS" {
            self.ifs_changed = true;
        }
        if let Some(target) = self.namerefs.get(name).cloned() {
            // Through a nameref the assignment lands on its target.
            self.vars.remove(&target);
            self.vars.remove(name);
            return;
        }
        // A value set on a branch the shell may not take is unknown afterwards.
        if value.dynamic || self.cond_depth > 0 {
            self.vars.remove(name);
        } else {
            self.vars.insert(name.to_owned(), value.text.clone());
        }
    }

    /// Forgets a variable: a builtin assigned it a value the guard doesn't know.
    pub(crate) fn forget_var(&mut self, name: &str) {
        if name == "IFS" {
            self.ifs_changed = true;
        }
        self.vars.remove(name);
    }

    /// Runs `f` with `argv` recorded as the outermost command, unless one already is.
    pub(crate) fn with_outer(&mut self, argv: &[Arg], f: impl FnOnce(&mut Self)) {
        let set = self.outer.is_none();
        if set {
            self.outer = Some(join_args(argv));
        }
        let saved = self.current.clone();
        f(self);
        self.current = saved;
        if set {
            self.outer = None;
        }
    }
}

/// Whether a path is a terminal or null device, which writes can't hurt.
fn is_device(p: &str) -> bool {
    matches!(
        p,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero" | "-"
    )
}
