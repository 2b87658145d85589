// The errors the storage adapters throw: real `Error`s with a stable `code`, the
// backend's own error kept as `cause` (the core maps the codes: EEXIST, ENOSPC, ...).

/** An `Error` with `code` (and the original error as `cause`). */
export function typedError(code, message, cause) {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

/** A bad option or argument of an adapter: a `TypeError` with code INVALID_ARGUMENT. */
export function invalidArgument(message) {
  return Object.assign(new TypeError(message), { code: "INVALID_ARGUMENT" });
}

/** An exclusive write to a path that exists (code EEXIST). */
export function alreadyExists(message) {
  return typedError("EEXIST", message);
}

/** A read that a symbolic link would take outside the store (code OUTSIDE_STORE). */
export function outsideStore(path) {
  return typedError("OUTSIDE_STORE", `${path} resolves outside the store through a symbolic link`);
}
