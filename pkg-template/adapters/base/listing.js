// `list(dir)` over a store of flat keys (memory, IndexedDB, R2, KV, Durable Objects):
// a folder is a key prefix, its children the next segments.

/** The key prefix of a folder: "" for the root, else the folder with one trailing "/". */
export function folderPrefix(dir) {
  return dir === "" || dir.endsWith("/") ? dir : `${dir}/`;
}

/** The direct children of `prefix` among `keys` (sub-folders end in "/"), sorted; other keys are skipped. */
export function children(prefix, keys) {
  const names = new Set();
  for (const key of keys) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf("/");
    names.add(slash === -1 ? rest : rest.slice(0, slash + 1));
  }
  names.delete("");
  return [...names].sort();
}
