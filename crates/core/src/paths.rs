//! Store paths: `/`-joined strings, normalised lexically and confined to the store.

/// Normalises `.` and `..` and repeated `/` lexically. Returns `None` for a path that
/// holds a NUL or a backslash, or a relative path that climbs above its start.
/// An absolute path keeps its leading `/`; `..` at the root stays at the root.
///
/// ```
/// use toolctx_core::paths::normalize;
/// assert_eq!(normalize("/a/./b/../c//d").as_deref(), Some("/a/c/d"));
/// assert_eq!(normalize("a/../../b"), None);
/// ```
pub fn normalize(path: &str) -> Option<String> {
    if path.bytes().any(|b| b == 0 || b == b'\\') {
        return None;
    }
    // The common case, a filepath the store handed out, is normal already: as it is.
    if is_normal(path) {
        return Some(path.to_owned());
    }
    lexical(path)
}

/// `normalize`'s work, part by part, for any path.
fn lexical(path: &str) -> Option<String> {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() && !absolute {
                    return None;
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    Some(if absolute { format!("/{joined}") } else { joined })
}

/// Whether `normalize` would return `path` unchanged: no empty part but a leading `/`'s,
/// no `.` or `..` part.
fn is_normal(path: &str) -> bool {
    !path.is_empty()
        && path.split('/').enumerate().all(|(i, part)| !matches!(part, "." | "..") && (i == 0 || !part.is_empty()))
}

/// Whether normalised `path` lies strictly inside normalised `dir`.
pub fn is_inside(dir: &str, path: &str) -> bool {
    if dir.is_empty() || dir == "/" {
        return !path.is_empty() && path != "/" && path.starts_with(dir);
    }
    path.len() > dir.len() + 1 && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
}

/// Normalises `path` and returns it when it lies inside `dir` (already normalised).
pub fn confine(dir: &str, path: &str) -> Option<String> {
    normalize(path).filter(|p| is_inside(dir, p))
}

/// The last part of `path`, after its last `/` (all of it when it has none).
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `dir/name`, without doubling a `/`.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_paths_are_returned_as_they_are_and_others_normalised() {
        for p in [
            "",
            "/",
            "//",
            "a",
            "/a",
            "a/",
            "/a/",
            "a//b",
            "/a/./b",
            "/a/../b",
            "..",
            "../a",
            "/..",
            "/a/b/..",
            ".",
            "./a",
            "/home/u/.agent/context/grep_0123456789ab_1700000000000_0_abcd.json",
            "/x/.hidden/..x/x..",
            "rel/x.json",
        ] {
            assert_eq!(normalize(p), lexical(p), "{p:?}");
        }
    }

    #[test]
    fn escapes_are_refused() {
        let dir = "/home/u/.agent/context";
        for p in [
            "/home/u/.agent/context/../secret.json",
            "/home/u/.agent/context/../../u/.ssh/id_rsa",
            "/home/u/.agent/contextual/x.json",
            "/home/u/.agent/context",
            "/etc/passwd",
            "/home/u/.agent/context/a\0.json",
            "/home/u/.agent/context/..\\..\\x.json",
            "relative/x.json",
            "",
        ] {
            assert_eq!(confine(dir, p), None, "{p:?}");
        }
        assert_eq!(
            confine(dir, "/home/u/.agent/context/./sub/../r.json").as_deref(),
            Some("/home/u/.agent/context/r.json")
        );
    }

    #[test]
    fn relative_stores_work_for_browser_keys() {
        assert_eq!(confine("agent/context", "agent/context/x.json").as_deref(), Some("agent/context/x.json"));
        assert_eq!(confine("agent/context", "agent/x.json"), None);
        assert_eq!(confine("agent/context", "../agent/context/x.json"), None);
        assert_eq!(normalize("/../a").as_deref(), Some("/a"));
        assert_eq!(join("a/", "b"), "a/b");
    }
}
